"""``memdoor doctor``: its probes pass in the real sandbox and fail where there is no isolation at all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from memdoor.cli import main
from memdoor.core.problem import TestCase
from memdoor.sandbox import SandboxConfig, TestResult, Verdict, open_sandbox, probes
from memdoor.sandbox.cgroups import Cgroups


def test_doctor_json_reports_every_check_ok_under_bwrap(capsys):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["isolation"] == "bwrap"
    assert report["ok"] is True
    names = [c["name"] for c in report["checks"]]
    assert {"unprivileged uid", "clean environment", "no network", "file system", "rlimits"} <= set(names)
    assert {"per-candidate limits", "candidate memory", "disk", "cpu share"} <= set(names)
    assert set(report["limits"]) == {"memory", "processes", "cpu", "disk"}
    if os.geteuid() == 0 and Cgroups.open() is not None:
        # As root with a usable cgroup nothing is weak; otherwise the uid check warns (the grader's own uid)
        # and the per-candidate limits warn (per-process rlimits only).
        assert report["weak"] is False
        assert all(c["status"] == "ok" for c in report["checks"]), report["checks"]
        assert report["limits"]["memory"].startswith("cgroup v")
        assert report["limits"]["cpu"].startswith("cgroup v")


def test_doctor_covers_the_reviews_test_stage(capsys):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    main(["doctor", "--json"])
    review = json.loads(capsys.readouterr().out)["review"]
    names = {c["name"]: c for c in review["checks"]}
    assert names["bubblewrap"]["status"] == "ok"
    assert {"python venv", "node", "rust"} <= set(names)
    assert all(c["fix"] for c in review["checks"] if c["status"] != "ok")  # the fix is named
    assert "tmpfs" in review["limits"]["copy"]
    assert main(["doctor", "--no-review"]) == 0
    text = capsys.readouterr().out
    assert "review test stage" not in text


def test_doctor_says_when_limits_are_per_process_only(capsys):
    assert main(["doctor", "--no-cgroups", "--no-review"]) == 0
    text = capsys.readouterr().out
    by_name = {line.split("]")[1].split()[0]: line for line in text.splitlines() if line.startswith("  [")}
    assert "WARN" in by_name["per-candidate"] and "cgroups=False" in by_name["per-candidate"]
    assert "WARN" in by_name["candidate"] and "all held" in by_name["candidate"]
    assert "ok" in by_name["disk"]
    assert "memory     rlimit only" in text


def test_doctor_checks_the_unshare_fallback(capsys):
    assert main(["doctor", "--isolation", "unshare", "--no-review"]) == 0
    text = capsys.readouterr().out
    assert "sandbox isolation: unshare" in text
    assert "FAIL" not in text and "no network" in text and "wall-clock kill" in text


def test_doctor_fails_cleanly_when_no_tool_works(capsys):
    assert main(["doctor", "--json", "--python", "/nonexistent/python3"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["isolation"] == "none" and report["ok"] is False
    assert report["checks"][0]["status"] == "fail"


class NoIsolation:
    """A deliberately unsafe 'sandbox': the program runs as the grader, with its environment and network."""

    name = "none"

    def run(self, code, tests, *, func_name=None, prelude="none", stop_at_first_failure=True):
        started = time.monotonic()
        results = []
        # The program goes in a file, not on the command line: probes find their processes by a marker in
        # the command line, and must find the program's child, never the program itself.
        with tempfile.NamedTemporaryFile("w", suffix=".py") as program:
            program.write(code)
            program.flush()
            for test in tests:
                p = subprocess.run(
                    [sys.executable, program.name],
                    input=test.input,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                results.append(
                    TestResult(status="passed" if p.returncode == 0 else "runtime_error", output=p.stdout)
                )
        status = "passed" if all(r.status == "passed" for r in results) else "runtime_error"
        return Verdict(status=status, tests=results, seconds=time.monotonic() - started, isolation=self.name)


@pytest.mark.parametrize(
    "probe", [probes.check_environment, probes.check_network, probes.check_files, probes.check_limits]
)
def test_probes_catch_a_sandbox_that_isolates_nothing(probe):
    config = SandboxConfig()
    check = probe(NoIsolation(), config)
    assert check.status == "fail", check
    with open_sandbox(config) as sb:
        check_in_real = probe(sb, config)
    assert check_in_real.status in ("ok", "warn"), check_in_real


def test_uid_probe_catches_root():
    if os.geteuid() != 0:
        pytest.skip("needs to run as root to see a root candidate")
    check = probes.check_uid(NoIsolation(), SandboxConfig())
    assert check.status == "fail" and "root" in check.detail


def test_record_reads_printed_output():
    v, out = probes.record(NoIsolation(), "print('hello')")
    assert v.passed and out.strip() == "hello"
    assert TestCase(kind="stdin", input="\n").output is None
