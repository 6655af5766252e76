"""The review section of ``memdoor doctor``: real bubblewrap, a real virtualenv, real node and cargo."""

from __future__ import annotations

import os
import shutil

import pytest
from project_helpers import RUST_TOOLCHAIN, have_rust

from memdoor.review.doctor import diagnose_review

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the test stage needs bubblewrap")


def by_name(report) -> dict:
    return {c.name: c for c in report.checks}


def test_a_python_node_and_rust_test_run_as_the_review_runs_them():
    path = f"{RUST_TOOLCHAIN}:/usr/bin:/bin"  # a system Python, node, the standalone toolchain
    env = {"PATH": path, "HOME": "/nonexistent"}
    report = diagnose_review(env)
    checks = by_name(report)
    assert checks["bubblewrap"].status == "ok" and report.ok
    if os.access("/usr/bin/python3", os.X_OK):
        assert checks["python venv"].status == "ok", checks["python venv"]
    if shutil.which("node", path=path):
        assert checks["node"].status == "ok", checks["node"]
    if have_rust():
        assert checks["rust"].status == "ok", checks["rust"]
    assert "tmpfs" in report.limits["copy"] and "host" in report.limits["copy"]
    assert set(report.limits) >= {"copy", "memory", "processes", "file size", "time", "network"}


def test_a_missing_tool_is_unavailable_with_its_fix_not_a_failure():
    report = diagnose_review({"PATH": "/nonexistent", "HOME": "/nonexistent"})
    checks = by_name(report)
    assert checks["bubblewrap"].status == "ok" and report.ok
    for name in ("python venv", "node", "rust"):
        assert checks[name].status == "unavailable" and checks[name].fix, checks[name]


@pytest.mark.skipif(os.geteuid() != 0, reason="the tests run as a leased uid only when Memdoor is root")
def test_a_tool_under_a_private_directory_is_named_with_the_fix(tmp_path):
    private = tmp_path / "home"  # pytest's tmp_path is private to root: the leased uid cannot reach it
    (private / "bin").mkdir(parents=True)
    (private / "bin" / "cargo").symlink_to(RUST_TOOLCHAIN / "cargo" if have_rust() else "/bin/true")
    report = diagnose_review({"PATH": f"{private / 'bin'}:/usr/bin:/bin", "HOME": "/nonexistent"})
    rust = by_name(report)["rust"]
    assert rust.status == "fail" and "private" in rust.detail and "chmod o+x" in rust.fix
