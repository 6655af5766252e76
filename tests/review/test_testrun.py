"""The test command in the isolated copy: real bubblewrap, real processes."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from review_helpers import BUGGY, CALC, TESTS

from memdoor.core.errors import SandboxError
from memdoor.review.testrun import COPY_FAILED, MOUNT, TestRunConfig, reachable_sight, run_tests
from memdoor.review.testsight import Bind, Sight
from memdoor.review.teststage import base_problem
from memdoor.sandbox.cgroups import Cgroups


@pytest.fixture
def work():
    with tempfile.TemporaryDirectory(prefix="memdoor-review-test-") as tmp:
        os.chmod(tmp, 0o711)  # the leased uid must reach the copy (pytest's tmp_path is private)
        d = Path(tmp) / "copy"
        d.mkdir()
        (d / "test_calc.py").write_text(TESTS)
        yield d


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid is leased only when Memdoor runs as root")
def test_an_unreachable_copy_is_a_sandbox_error(tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "copy").mkdir()
    with pytest.raises(SandboxError, match="not searchable"):
        run_tests(private / "copy", "true")


def test_passing_and_failing_tests(work):
    (work / "calc.py").write_text(
        CALC.replace("return total / len(xs)", "return total / len(xs) if xs else 0")
    )
    ok = run_tests(work, "python3 -m unittest -q")
    assert ok.passed and ok.exit_code == 0 and "OK" in ok.output
    (work / "calc.py").write_text(BUGGY)
    bad = run_tests(work, "python3 -m unittest -q")
    assert not bad.passed and bad.exit_code == 1 and "FAILED" in bad.output


def test_isolation_no_network_no_environment_no_host_files(work, monkeypatch):
    monkeypatch.setenv("MEMDOOR_CANARY_SECRET", "s3cret")
    script = (
        "import os, socket, sys\n"
        "print('cwd', os.getcwd())\n"
        "print('env', sorted(os.environ))\n"
        "print('uid', os.getuid())\n"
        "print('root-files', os.path.exists('/root'), os.path.exists('/work'), os.path.exists('/home'))\n"
        "s = socket.socket()\n"
        "try:\n    s.connect(('127.0.0.1', 6379)); print('net yes')\nexcept OSError:\n    print('net no')\n"
        "open('written.txt', 'w').write('ok'); print('wrote', open('written.txt').read())\n"
        "try:\n    open('/usr/evil', 'w')\nexcept OSError:\n    print('usr read-only')\n"
    )
    (work / "probe.py").write_text(script)
    run = run_tests(work, "python3 probe.py")
    assert run.passed, run.output
    assert f"cwd {MOUNT}" in run.output
    assert "s3cret" not in run.output and "MEMDOOR_CANARY_SECRET" not in run.output
    assert "net no" in run.output and "usr read-only" in run.output and "wrote ok" in run.output
    assert "root-files False False False" in run.output
    if os.geteuid() == 0:
        assert "uid 0" not in run.output
    assert not (work / "written.txt").exists()  # it wrote in its own size-limited copy, not on the host


def test_time_limit_kills_everything(work):
    run = run_tests(work, "sleep 60 & sleep 60", TestRunConfig(timeout_s=0.5))
    assert run.timed_out and not run.passed and run.exit_code is None


def test_output_keeps_the_end(work):
    run = run_tests(work, "seq 1 100000", TestRunConfig(keep_chars=50))
    assert run.passed and run.output.endswith("100000\n") and len(run.output) <= 50


needs_cgroups = pytest.mark.skipif(Cgroups.open() is None, reason="no control group can be created here")


@needs_cgroups
def test_the_command_has_one_control_group_for_memory_and_processes(work):
    hog = run_tests(  # /tmp's pages count against the group's memory, so this is killed, not written
        work, "head -c 300M /dev/zero > /tmp/big; echo wrote", TestRunConfig(group_memory_mb=64, tmp_mb=512)
    )
    assert not hog.passed and hog.memory_exceeded and "wrote" not in hog.output
    assert hog.limited_by.startswith("cgroup")
    many = run_tests(  # more processes than the group allows: the shell cannot fork them all
        work, "for i in $(seq 40); do sleep 5 & done; wait", TestRunConfig(max_processes=10, timeout_s=30)
    )
    assert not many.passed and ("fork" in many.output or "Resource temporarily unavailable" in many.output)
    fine = run_tests(
        work, "head -c 10M /dev/zero > /tmp/small && echo wrote", TestRunConfig(group_memory_mb=64)
    )
    assert fine.passed and not fine.memory_exceeded and "wrote" in fine.output


def test_writes_in_the_copy_are_size_limited_and_never_reach_the_host(work):
    """Issue 41 class 4: the copy the command writes in is a tmpfs of the repository's size plus
    ``copy_mb``; a command writing far more is stopped there, and the host's disk is not touched."""
    before = shutil.disk_usage(work).used
    flood = "for i in $(seq 1 200); do head -c 8M /dev/zero > f$i || { echo stopped at $i; exit 1; }; done; echo all"
    run = run_tests(work, flood, TestRunConfig(copy_mb=32, timeout_s=300))  # tries 1.6 GiB against 32 MiB
    assert not run.passed and "stopped at" in run.output and "all" not in run.output.split()
    assert "No space left on device" in run.output, run.output
    assert sorted(p.name for p in work.iterdir()) == ["test_calc.py"]  # nothing written on the host
    assert shutil.disk_usage(work).used - before < 512 << 20
    roomy = run_tests(work, "head -c 8M /dev/zero > f && ls -s f", TestRunConfig(copy_mb=32))
    assert roomy.passed, roomy.output  # within the limit, writing works


def test_a_file_larger_than_the_command_may_write_is_still_copied(work):
    """Security review: a 100 MB file of the repository made every run "not fit in the test copy" (the
    copy ran under the command's file-size limit); the limit is the command's, applied after the copy."""
    (work / "big.bin").write_bytes(b"\1" * (3 << 20))
    limits = TestRunConfig(copy_mb=1, max_file_mb=1)
    run = run_tests(work, "wc -c < big.bin", limits)
    assert run.passed and run.output.strip() == str(3 << 20), run.output
    grow = run_tests(work, "head -c 2M /dev/zero > more.bin", limits)  # the command's own limit holds
    assert not grow.passed and grow.exit_code != COPY_FAILED, grow.output


def test_a_copy_that_fails_names_the_file_in_one_line(work):
    (work / "locked.txt").write_text("x\n")
    (work / "locked.txt").chmod(0)  # the command's uid cannot read it
    run = run_tests(work, "echo ran")
    assert run.exit_code == COPY_FAILED and "ran" not in run.output, run.output
    (line,) = run.output.strip().splitlines()
    assert line.startswith("memdoor: the repository could not be copied into the test copy: cp: ")
    assert "locked.txt" in line
    why = base_problem(run)  # what the review says: the tests cannot run on the base, and why
    assert "could not be copied" in why and "locked.txt" in why and "\n" not in why


def test_what_the_leased_uid_cannot_reach_is_named_unless_optional(tmp_path):
    private = tmp_path / "private"  # pytest's tmp_path is private to its owner
    (private / "venv").mkdir(parents=True)
    (private / "cargo").mkdir()
    sight = Sight(
        binds=[
            Bind(source=str(private / "venv"), dest=str(private / "venv"), why="the active virtualenv"),
            Bind(source=str(private / "cargo"), dest=str(private / "cargo"), why="cargo", optional=True),
        ],
        path=f"{private / 'venv' / 'bin'}:/usr/bin:/bin",
    )
    seen = reachable_sight(sight)
    assert seen.binds == [] and seen.path == "/usr/bin:/bin"
    (note,) = seen.hidden
    assert str(private / "venv") in note and "chmod o+x" in note


def test_output_that_looks_like_bwrap_is_the_commands_and_a_real_start_failure_is_a_sandbox_error(work):
    """Issue 45 (security review): a failing command whose output begins with ``bwrap:`` is a run, not a
    sandbox that cannot start; bubblewrap's own failure (a bind it cannot make) still is."""
    run = run_tests(work, "echo 'bwrap: Creating new namespace failed: fake'; exit 1")
    assert not run.passed and run.exit_code == 1, run.output
    assert run.output == "bwrap: Creating new namespace failed: fake\n"  # the start marker is not in it
    missing = "/nonexistent-memdoor-bind"
    config = TestRunConfig(sight=Sight(binds=[Bind(source=missing, dest=missing, why="a test")]))
    with pytest.raises(SandboxError, match=f"cannot start: bwrap: .*{missing}"):
        run_tests(work, "echo ran", config)
