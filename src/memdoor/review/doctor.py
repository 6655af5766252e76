"""``memdoor doctor``'s review section: can the review's test stage run the user's tests here?

Checks that bubblewrap is there, then runs a trivial test the way ``memdoor review --test`` would, from
this process's environment: Python from a new virtualenv (a module only that virtualenv has), Node with a
package in the project's ``node_modules`` (``node --test``), and Rust (``cargo test --offline`` of a crate
without dependencies). Each result names the fix when something is missing. It also says which limits
the test command runs under (its copy's size, memory, processes, file size, time).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from memdoor.core.errors import SandboxError
from memdoor.review.testrun import TestRun, TestRunConfig, run_tests
from memdoor.review.testsight import sight_for
from memdoor.sandbox.cgroups import Cgroups
from memdoor.sandbox.supervisor import TOOL_PATH

Status = Literal["ok", "unavailable", "fail"]
SETUP_TIMEOUT_S = 300.0
PRIVATE_FIX = (
    "{what} must be readable by other users: as root the tests run as an unprivileged uid, so a tool "
    "under a private home (/root) is hidden; chmod o+x the private directory, or install the tool "
    "elsewhere (e.g. make the virtualenv from /usr/bin/python3)"
)


class ReviewCheck(BaseModel):
    """One check of the review's test stage."""

    name: str
    status: Status = Field(description="ok; unavailable (the tool is not installed: not a failure); fail.")
    detail: str = ""
    fix: str = Field(default="", description="What to do when it is not ok.")


class ReviewDoctor(BaseModel):
    checks: list[ReviewCheck] = Field(default_factory=list)
    limits: dict[str, str] = Field(default_factory=dict, description="How the test command is limited.")

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)


def _last(run: TestRun) -> str:
    lines = run.output.strip().splitlines()
    return lines[-1][:160] if lines else f"exit {run.exit_code}"


def _run(repo: Path, command: str, environ: Mapping[str, str]) -> TestRun:
    sight = sight_for(command, environ, checkout=repo)
    return run_tests(repo, command, TestRunConfig(timeout_s=SETUP_TIMEOUT_S, sight=sight))


def _outcome(name: str, run: TestRun, fix: str) -> ReviewCheck:
    if run.passed:
        return ReviewCheck(name=name, status="ok", detail=f"a trivial test passed ({run.seconds:.1f} s)")
    hidden = f"; not visible: {run.hidden[0]}" if run.hidden else ""
    return ReviewCheck(name=name, status="fail", detail=f"{run.outcome}: {_last(run)}{hidden}", fix=fix)


def _python(where: Path, environ: Mapping[str, str]) -> ReviewCheck:
    name = "python venv"
    python = shutil.which("python3", path=environ.get("PATH", ""))
    if python is None:
        return ReviewCheck(
            name=name, status="unavailable", detail="no python3 on PATH", fix="install Python 3"
        )
    venv = where / "venv"
    made = subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True,
                          timeout=SETUP_TIMEOUT_S, check=False)  # fmt: skip
    if made.returncode != 0:
        why = (made.stderr.strip().splitlines() or ["failed"])[-1]
        return ReviewCheck(name=name, status="unavailable", detail=f"{python} -m venv: {why}",
                           fix="install the venv module (Debian/Ubuntu: apt-get install python3-venv)")  # fmt: skip
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "memdoor_doctor_pkg.py").write_text("def one():\n    return 1\n")
    repo = where / "pyrepo"
    repo.mkdir()
    (repo / "test_one.py").write_text("import unittest\nfrom memdoor_doctor_pkg import one\n\n\n"
                                      "class T(unittest.TestCase):\n    def test_one(self):\n"
                                      "        self.assertEqual(one(), 1)\n")  # fmt: skip
    env = {**environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{environ.get('PATH', '')}"}
    run = _run(repo, "python3 -m unittest -q", env)
    return _outcome(name, run, PRIVATE_FIX.format(what="the virtualenv's base interpreter"))


def _node(where: Path, environ: Mapping[str, str]) -> ReviewCheck:
    if shutil.which("node", path=environ.get("PATH", "")) is None:
        return ReviewCheck(
            name="node", status="unavailable", detail="no node on PATH", fix="install Node.js 18+"
        )
    repo = where / "jsrepo"
    pkg = repo / "node_modules" / "memdoor-doctor-pkg"
    pkg.mkdir(parents=True)
    (pkg / "index.js").write_text("module.exports = () => 1;\n")
    (repo / "one.test.js").write_text("const test = require('node:test');\nconst assert = require('node:assert');\n"
                                      "test('one', () => assert.strictEqual(require('memdoor-doctor-pkg')(), 1));\n")  # fmt: skip
    return _outcome(
        "node", _run(repo, "node --test", environ), "node and its libraries must be readable by others"
    )


def _rust(where: Path, environ: Mapping[str, str]) -> ReviewCheck:
    if shutil.which("cargo", path=environ.get("PATH", "")) is None:
        return ReviewCheck(name="rust", status="unavailable", detail="no cargo on PATH",
                           fix="install Rust (rustup, or scripts/install_rust.sh)")  # fmt: skip
    repo = where / "rsrepo"
    (repo / "src").mkdir(parents=True)
    (repo / "Cargo.toml").write_text('[package]\nname = "doctor"\nversion = "0.1.0"\nedition = "2021"\n')
    (repo / "src" / "lib.rs").write_text("#[test]\nfn one() {\n    assert_eq!(1, 1);\n}\n")
    run = _run(repo, "cargo test --offline -q", environ)
    return _outcome("rust", run, PRIVATE_FIX.format(what="cargo, its toolchain and the cargo home"))


def limits_enforced(config: TestRunConfig | None = None) -> dict[str, str]:
    """How the test command is limited here, in words."""
    config = config or TestRunConfig()
    groups = Cgroups.open() if config.sandbox.cgroups else None
    group = f"{groups.mode}: " if groups is not None else ""
    return {
        "copy": f"a tmpfs of the repository's size + {config.copy_mb} MiB (writes never reach the host's disk)",
        "memory": f"{group}{config.group_memory_mb} MiB for all processes and tmpfs"
        if groups
        else f"rlimit only: {config.memory_mb} MiB address space per process",
        "processes": f"{config.max_processes}" + (" (cgroup)" if groups else " (rlimit, as root)"),
        "file size": f"{config.max_file_mb} MiB per file (rlimit)",
        "time": f"{config.timeout_s:g} s (--test-timeout), the whole pid namespace killed",
        "network": "none (a new network namespace with only lo)",
    }


def diagnose_review(environ: Mapping[str, str] | None = None) -> ReviewDoctor:
    """The review section of ``memdoor doctor``."""
    environ = dict(os.environ if environ is None else environ)
    report = ReviewDoctor(limits=limits_enforced())
    if shutil.which("bwrap", path=TOOL_PATH) is None:
        report.checks.append(ReviewCheck(name="bubblewrap", status="fail", detail="bwrap is not installed",
                                         fix="apt-get install bubblewrap (Debian/Ubuntu); a review with --test "
                                         "exits 3 without it"))  # fmt: skip
        return report
    report.checks.append(
        ReviewCheck(name="bubblewrap", status="ok", detail=shutil.which("bwrap", path=TOOL_PATH))
    )
    with tempfile.TemporaryDirectory(prefix="memdoor-doctor-review-") as tmp:
        where = Path(tmp)
        os.chmod(where, 0o711)  # the leased uid must reach the projects
        for check in (_python, _node, _rust):
            part = where / check.__name__.strip("_")
            part.mkdir()
            try:
                report.checks.append(check(part, environ))
            except (SandboxError, OSError, subprocess.SubprocessError) as e:
                name = check.__name__.strip("_")
                report.checks.append(ReviewCheck(name=name, status="fail", detail=f"{type(e).__name__}: {e}"))
    return report
