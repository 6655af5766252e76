"""The environment git runs in for the review (repo.hardened_env): no transport the repository could
turn into a program, and no variable of the caller's pointing git at another repository or index."""

from __future__ import annotations

import subprocess

import pytest
from review_helpers import BUGGY, git, make_repo

from memdoor.core.errors import ReviewInputError
from memdoor.review.gitrange import export_tree, read_range
from memdoor.review.repo import KEPT_LOCAL, hardened_env
from memdoor.review.repo import git as git_hardened


@pytest.fixture
def ranged(repo):
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "commit", "-qam", "change")
    return repo


def test_a_promisor_remote_of_the_repository_is_never_fetched_from(ranged, tmp_path):
    """A partial clone whose promisor's url is ``ext::`` (allowed by the repository's own config) and a
    missing object: git would fetch it lazily, running the url's command."""
    marker = tmp_path / "ran"
    for key, value in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "evil"),
        ("remote.evil.promisor", "true"),
        ("remote.evil.url", f"ext::sh -c touch% {marker}% >&2"),
        ("protocol.ext.allow", "always"),
    ]:
        git(ranged, "config", key, value)
    blob = git(ranged, "rev-parse", "HEAD:calc.py").strip()
    (ranged / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(ReviewInputError) as e:
        read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    assert "\n" not in str(e.value)
    assert not marker.exists()


def test_the_callers_index_file_is_never_written(ranged, tmp_path, monkeypatch):
    """A pre-commit hook runs with GIT_INDEX_FILE naming the commit's index: exporting a tree and
    reading the range leave it as it was."""
    index = tmp_path / "index.lock"
    index.write_bytes((ranged / ".git" / "index").read_bytes())
    before = index.read_bytes()
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    found = read_range(ranged, "HEAD~1", None, 1_000_000)
    assert "len(xs) - 1" in found.diff
    tree = export_tree(ranged, found.base_commit, tmp_path / "base")
    assert (tree / "calc.py").read_text() != BUGGY
    assert index.read_bytes() == before


def test_git_reads_the_directory_it_is_given_not_the_callers_git_dir(ranged, tmp_path, monkeypatch):
    other = make_repo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    found = read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    assert "len(xs) - 1" in found.diff


def test_every_local_variable_git_names_is_dropped_and_no_protocol_is_allowed(repo, monkeypatch):
    names = subprocess.run(["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True).stdout
    for name in names.split():
        if name not in KEPT_LOCAL:
            monkeypatch.setenv(name, "/nowhere")
    for name in ("GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EDITOR"):
        monkeypatch.setenv(name, "touch /nowhere")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.name")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "caller")
    env = hardened_env(repo)
    assert not [n for n in names.split() if n not in KEPT_LOCAL and n in env]
    assert env["GIT_ALLOW_PROTOCOL"] == "" and env["GIT_NO_LAZY_FETCH"] == "1"
    assert "GIT_SSH_COMMAND" not in env and "GIT_ASKPASS" not in env and env["GIT_EDITOR"] == ":"
    assert env["GIT_CONFIG_KEY_0"] == "user.name" and env["GIT_CONFIG_KEY_1"] == "core.hooksPath"


def test_the_reviews_settings_win_over_the_callers_git_c(repo, tmp_path, monkeypatch):
    """git reads GIT_CONFIG_PARAMETERS (the caller's ``git -c``) after the GIT_CONFIG_COUNT pairs: the
    caller's hooks path and filter command outranked the review's. A filter name with a quote, a ``!``
    and an ``=`` is emptied too."""
    marker = tmp_path / "ran"
    name = "e'v!l=x"
    (repo / ".gitattributes").write_text(f"*.py filter={name}\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    quoted = "'filter.e'\\''v'\\!'l=x.clean'"  # as git quotes it: ' and ! escaped
    monkeypatch.setenv(
        "GIT_CONFIG_PARAMETERS", f"'core.hooksPath'='{tmp_path}/hooks' {quoted}='touch {marker}; cat'"
    )
    (repo / "calc.py").write_text(BUGGY)
    shown = git_hardened(["config", "-z", "--get-regexp", r"^(core\.hookspath|filter\.)"], repo).stdout
    last = {k: v for k, _, v in (e.partition("\n") for e in shown.split("\0") if e)}
    assert last == {"core.hookspath": "/dev/null", f"filter.{name}.clean": "", f"filter.{name}.smudge": "",
                    f"filter.{name}.process": "", f"filter.{name}.required": "false"}  # fmt: skip
    assert "len(xs) - 1" in read_range(repo, "HEAD", None, 1_000_000).diff
    assert not marker.exists()
