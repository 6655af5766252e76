"""The test stage as a user meets it (issue 45): ``memdoor review`` in a real process from inside the
user's environment, with real bubblewrap, a real virtualenv with pytest, real Node and a real cargo build
offline; scripted agents that find nothing (the test stage needs no model). A change breaking a tested
function: exit 1 and a finding naming the failing test. A refactoring: exit 0. Tests that cannot run on
the base: exit 3 with the reason. No bubblewrap: exit 3, never 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from project_helpers import (
    RUST_TOOLCHAIN,
    have_rust,
    make_venv,
    node_project,
    python_project,
    rust_project,
    shared_dir,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the test stage needs bubblewrap")


@pytest.fixture(scope="module")
def place():
    with tempfile.TemporaryDirectory(prefix="memdoor-teststage-") as tmp:
        yield shared_dir(Path(tmp))


@pytest.fixture(scope="module")
def venv(place) -> Path:
    made = make_venv(place)
    if made is None:
        pytest.skip("pytest cannot be installed into a new virtualenv here (no package index)")
    return made


def review(
    repo: Path, diff: str, test: str, env: dict[str, str], fmt: str = "json"
) -> subprocess.CompletedProcess:
    quiet = repo.parent / "quiet.json"
    quiet.write_text(json.dumps(['```json\n{"findings": []}\n```']))
    return subprocess.run(
        [sys.executable, "-m", "memdoor", "review", "-", "--agents", "1", "--model", f"scripted:{quiet}",
         "--test", test, "--format", fmt, "--fail-on", "high"],
        cwd=repo, input=diff, capture_output=True, text=True, timeout=900,
        env={**env, "MEMDOOR_HOME": str(repo.parent / "mdhome")},
    )  # fmt: skip


def activated(venv: Path) -> dict[str, str]:
    """The environment of a shell after ``. venv/bin/activate``."""
    return {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}


def test_a_virtualenvs_pytest_finds_the_broken_test_and_passes_a_refactoring(place, venv):
    repo, diffs = python_project(place)
    env = activated(venv)
    broken = review(repo, diffs["broken"], "python3 -m pytest -q", env)
    assert broken.returncode == 1, broken.stderr
    out = json.loads(broken.stdout)
    assert out["complete"] is True and out["base_tests"]["passed"] is True
    (f,) = out["findings"]
    assert f["source"] == "tests" and f["severity"] == "high" and f["file"] == "calc.py"
    assert "test_calc.py::test_scale" in f["message"] and "assert [3, 5] == [2, 4]" in f["message"]
    assert "test_empty" not in f["message"]
    assert str(venv) in out["tests"]["sees"]  # bound read-only at its own path
    fine = review(repo, diffs["refactor"], "python3 -m pytest -q", env)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert json.loads(fine.stdout)["tests"]["passed"] is True


def test_tests_that_cannot_run_on_the_base_make_the_review_incomplete(place, venv):
    repo, diffs = python_project(place / "incomplete")
    outside = {**os.environ, "PATH": "/usr/bin:/bin"}  # the case: a python3 without pytest
    r = review(repo, diffs["broken"], "python3 -m pytest -q", outside)
    assert r.returncode == 3, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["complete"] is False and "cannot run on the base" in out["incomplete_reason"]
    assert "No module named pytest" in out["base_tests"]["output"] and out["tests"] is None
    assert out["findings"] == []  # nothing blamed on the change
    assert r.stderr.strip().splitlines()[-1].startswith("memdoor: review not completed:")
    none = review(repo, diffs["broken"], "python3 -m pytest -q -k no_such_test", activated(venv))
    assert none.returncode == 3 and "pytest exit 5: no test was collected" in none.stderr
    md = review(repo, diffs["broken"], "no-such-tool --run", outside, "markdown")
    assert md.returncode == 3 and md.stdout.startswith("**Review not completed:** the tests cannot run")
    assert "exit 127" in md.stdout.splitlines()[0]
    sarif = review(repo, diffs["broken"], "no-such-tool --run", outside, "sarif")
    inv = json.loads(sarif.stdout)["runs"][0]["invocations"][0]
    assert sarif.returncode == 3 and inv["executionSuccessful"] is False
    assert "not completed" in inv["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="hides bwrap in a mount namespace"
)
def test_without_bubblewrap_the_review_is_incomplete_never_1(place):
    repo, diffs = python_project(place / "nobwrap")
    argv = [sys.executable, "-m", "memdoor", "review", "-", "--agents", "1", "--test", "python3 -m pytest -q",
            "--model", f"scripted:{repo.parent / 'quiet.json'}", "--json"]  # fmt: skip
    (repo.parent / "quiet.json").write_text(json.dumps(['```json\n{"findings": []}\n```']))
    hide = 'mount --bind /dev/null /usr/bin/bwrap && exec "$@"'  # bwrap gone: not an executable file
    r = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, "hide", *argv],
        cwd=repo, input=diffs["broken"], capture_output=True, text=True, timeout=600,
        env={**os.environ, "MEMDOOR_HOME": str(repo.parent / "mdhome")},
    )  # fmt: skip
    assert r.returncode == 3, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "bubblewrap" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("memdoor: review not completed:")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_project_with_its_node_modules(place):
    repo, diffs = node_project(place)
    broken = review(repo, diffs["broken"], "node --test", dict(os.environ))
    assert broken.returncode == 1, broken.stdout + broken.stderr
    out = json.loads(broken.stdout)
    assert out["base_tests"]["passed"] is True, out["base_tests"]["output"]
    (f,) = out["findings"]
    assert "scale doubles" in f["message"] and "scale of nothing" not in f["message"]
    fine = review(repo, diffs["refactor"], "node --test", dict(os.environ))
    assert fine.returncode == 0, fine.stdout + fine.stderr


@pytest.mark.skipif(not have_rust(), reason="the sandbox's Rust toolchain is not installed")
def test_a_rust_crate_built_offline(place):
    repo, diffs = rust_project(place)
    cargo_home = shared_dir(place / "cargo-home")
    env = {**os.environ, "PATH": f"{RUST_TOOLCHAIN}:{os.environ['PATH']}", "CARGO_HOME": str(cargo_home)}
    broken = review(repo, diffs["broken"], "cargo test --offline", env)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    out = json.loads(broken.stdout)
    assert out["base_tests"]["passed"] is True, out["base_tests"]["output"]
    (f,) = [g for g in out["findings"] if g["source"] == "tests"]
    assert "tests::scales" in f["message"] and "tests::empty" not in f["message"]
    # the differential stage also runs the changed function; with no description a difference is low
    shown = [g for g in out["findings"] if g["source"] == "differential"]
    assert all(g["severity"] == "low" and g["verified"] for g in shown), shown
    fine = review(repo, diffs["refactor"], "cargo test --offline", env)
    assert fine.returncode == 0, fine.stdout + fine.stderr
