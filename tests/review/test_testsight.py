"""What the test command sees: computed from a real environment and real directories (no sandbox here;
tests/review/test_teststage_projects.py runs them in bubblewrap)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from review_helpers import git, make_repo

from memdoor.review.testsight import first_word, sight_for


def tool(prefix: Path, name: str) -> Path:
    (prefix / "bin").mkdir(parents=True, exist_ok=True)
    exe = prefix / "bin" / name
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


def test_a_virtualenv_and_its_base_interpreter_are_seen_and_path_is_filtered(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    secret_dir = tmp_path / "secret-tools"
    tool(secret_dir, "leak")
    env = {"PATH": f"{venv / 'bin'}:{secret_dir / 'bin'}:/usr/bin:/bin", "VIRTUAL_ENV": str(venv),
           "HOME": str(tmp_path / "home"), "API_KEY": "s3cret"}  # fmt: skip
    sight = sight_for("python3 -m pytest -q", env)
    dests = {b.dest for b in sight.binds}
    assert os.path.realpath(venv) in dests
    base = Path(os.path.realpath(sys.executable)).parent.parent  # the interpreter the venv was made from
    assert str(base) in dests or str(base).startswith("/usr")
    assert sight.path.split(":")[0] == str(venv / "bin") and str(secret_dir / "bin") not in sight.path
    assert "s3cret" not in repr(sight) and "API_KEY" not in sight.env  # nothing but what is named


def test_named_variables_and_paths_and_what_is_never_shown(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    extra = tmp_path / "fixtures"
    extra.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "DATABASE_URL": "sqlite://", "API_KEY": "s3cret"}
    sight = sight_for(
        "make test", env, test_paths=[extra, home, Path("/")], test_env=["DATABASE_URL", "UNSET"]
    )
    assert sight.env == {"DATABASE_URL": "sqlite://"}
    assert [b.dest for b in sight.binds] == [str(extra)]
    assert any(str(home) in h and "never" in h for h in sight.hidden)  # the whole home: refused, said
    assert any("UNSET" in h for h in sight.hidden)


def test_the_cargo_home_without_its_credentials_and_the_checkouts_node_modules(tmp_path):
    cargo = tmp_path / "cargo"
    for part in ("bin", "registry", "git"):
        (cargo / part).mkdir(parents=True)
    (cargo / "credentials.toml").write_text('[registry]\ntoken = "s3cret"\n')
    tool(cargo, "cargo")
    checkout = make_repo(tmp_path / "checkout")
    (checkout / "node_modules" / "lib").mkdir(parents=True)  # untracked: not in the copy
    env = {"PATH": f"{cargo / 'bin'}:/usr/bin:/bin", "CARGO_HOME": str(cargo), "HOME": "/nonexistent"}
    sight = sight_for("cargo test", env, checkout=checkout)
    binds = {b.dest: b.source for b in sight.binds}
    assert {str(cargo / p) for p in ("bin", "registry", "git")} <= set(binds) and str(cargo) not in binds
    assert sight.env["CARGO_HOME"] == str(cargo) and sight.path.startswith(str(cargo / "bin"))
    assert binds["/tmp/repo/node_modules"] == str(checkout / "node_modules")


def test_first_word_skips_assignments():
    assert first_word("FOO=1 env python3 -m pytest") == "python3"
    assert first_word("./run-tests.sh --fast") == "./run-tests.sh"


def test_a_relative_program_is_the_copys_never_the_hosts_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the user's checkout, with its untracked files
    tool(tmp_path, "run-tests.sh")
    (tmp_path / "notes.txt").write_text("private\n")
    sight = sight_for("./bin/run-tests.sh --all", {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert sight.binds == []


def test_a_user_installed_program_shows_its_bin_and_lib_never_the_rest_of_its_prefix(tmp_path):
    """Issue 45 (security review): pytest from ``pip install --user`` is ``~/.local/bin/pytest``; its
    prefix ``~/.local`` also holds ``~/.local/share`` (shell history, keyrings): never shown."""
    home = tmp_path / "home"
    local = home / ".local"
    tool(local, "pytest")
    (local / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (local / "share" / "keyrings").mkdir(parents=True)
    env = {"PATH": f"{local / 'bin'}:/usr/bin:/bin", "HOME": str(home)}
    sight = sight_for("pytest -q", env)
    sources = {b.source for b in sight.binds}
    assert str(local / "bin") in sources and str(local / "lib") in sources
    assert str(local) not in sources and not sight.visible(str(local / "share" / "keyrings"))
    assert sight.path.split(":")[0] == str(local / "bin")
    venv = home / "project" / ".venv"  # a virtualenv under the home directory is its own prefix: whole
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    inside = sight_for("python3 -m pytest", {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home)})
    assert os.path.realpath(venv) in {b.source for b in inside.binds}


def test_a_node_modules_link_or_tracked_directory_of_the_checkout_is_never_bound(tmp_path):
    """Security review: a change committing ``node_modules -> /host/dir`` (or ``../other``) had that host
    directory bound read-only into the test sandbox (``is_dir()`` follows the link)."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.txt").write_text("TOPSECRET\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    for target in (str(secret), "../secret"):
        checkout = make_repo(tmp_path / f"checkout-{len(target)}")
        (checkout / "node_modules").symlink_to(target)
        git(checkout, "add", "node_modules")
        git(checkout, "commit", "-qm", "a link")
        assert sight_for("node --test", env, checkout=checkout).binds == []
        git(checkout, "rm", "-q", "--cached", "node_modules")  # untracked: still a link, still not bound
        assert sight_for("node --test", env, checkout=checkout).binds == []
    tracked = make_repo(tmp_path / "tracked")
    (tracked / "node_modules" / "lib").mkdir(parents=True)
    (tracked / "node_modules" / "lib" / "index.js").write_text("module.exports = 1\n")
    git(tracked, "add", "node_modules")
    assert sight_for("node --test", env, checkout=tracked).binds == []  # in the copy already
    plain = tmp_path / "not-a-checkout"  # git cannot say what is tracked: not bound
    (plain / "node_modules").mkdir(parents=True)
    assert sight_for("node --test", env, checkout=plain).binds == []


def test_a_link_the_change_tracks_never_leads_a_bind_out_of_the_checkout(tmp_path):
    """Any bind through the checkout, not only node_modules: an active virtualenv ``.venv`` the change
    made a link to a host directory is not shown; the user's own (untracked) link is followed."""
    outside = tmp_path / "outside-venv"
    tool(outside, "python3")
    (outside / "pyvenv.cfg").write_text("home = /usr/bin\n")
    checkout = make_repo(tmp_path / "checkout")
    (checkout / ".venv").symlink_to(outside)
    env = {"PATH": f"{checkout / '.venv' / 'bin'}:/usr/bin:/bin", "HOME": "/nonexistent",
           "VIRTUAL_ENV": str(checkout / ".venv")}  # fmt: skip
    own = sight_for("python3 -m pytest", env, checkout=checkout)
    assert str(outside) in {b.source for b in own.binds}  # untracked: the user's own link
    git(checkout, "add", ".venv")
    changed = sight_for("python3 -m pytest", env, checkout=checkout)
    assert changed.binds == [] and not changed.visible(str(outside / "bin"))
    assert any(".venv" in h and "link" in h for h in changed.hidden)


def test_a_relative_path_entry_never_finds_the_program_in_the_checkout(tmp_path, monkeypatch):
    """A relative entry of the user's PATH (``bin``, ``.``) would resolve in the current directory, the
    checkout: its program's prefix, the checkout itself, was bound."""
    monkeypatch.chdir(tmp_path)
    tool(tmp_path, "pytest")
    (tmp_path / "notes.txt").write_text("private\n")
    sight = sight_for("pytest -q", {"PATH": "bin:.:/usr/bin:/bin", "HOME": "/nonexistent"})
    assert sight.binds == [] and not sight.visible(str(tmp_path / "notes.txt"))
