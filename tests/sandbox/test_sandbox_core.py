"""The sandbox core's own guarantees: uid leases, a result stream the candidate may forge, mixed test kinds.

Real sandboxes (bwrap here), real processes; uids from a range of their own so that concurrent test runs
and other graders on the machine are not disturbed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from memdoor.core.problem import TestCase
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.uids import UidPool, pids_of_uid

BASE = 64200 + (os.getpid() % 50) * 8  # 8 uids of our own per test process
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="uid leases need root")


@pytest.fixture(scope="module")
def core_sandbox():
    return open_sandbox(SandboxConfig(uid_base=BASE, uid_count=4, timeout_s=3))


def stdin(inp: str, out: str | None) -> TestCase:
    return TestCase(kind="stdin", input=inp, output=out)


# ---------------------------------------------------------------- uid leases
@needs_root
def test_leases_are_exclusive_within_a_process(tmp_path):
    pool = UidPool(BASE + 4, 2, str(tmp_path))
    with pool.lease() as a, pool.lease() as b:
        assert {a.uid, b.uid} == {BASE + 4, BASE + 5}


@needs_root
def test_leases_are_exclusive_across_processes(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from memdoor.sandbox.uids import UidPool\n"
            f"with UidPool({BASE + 4}, 1, {str(tmp_path)!r}).lease() as l:\n"
            "    print(l.uid, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == str(BASE + 4)
        with UidPool(BASE + 4, 2, str(tmp_path)).lease() as lease:
            assert lease.uid == BASE + 5
    finally:
        holder.kill()
        holder.wait()


@needs_root
def test_a_uid_left_dirty_is_swept_before_reuse(tmp_path):
    uid = BASE + 6
    pool = UidPool(uid, 1, str(tmp_path))
    with pool.lease() as lease:  # a run that ends without marking the uid clean
        straggler = subprocess.Popen(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "600"]
        )
        deadline = time.monotonic() + 60  # setpriv takes a while to start on a loaded machine
        while straggler.pid not in pids_of_uid(uid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert straggler.pid in pids_of_uid(uid)  # else the sweep below has nothing of the uid to kill
        assert lease.clean is False
    try:
        with pool.lease():
            assert straggler.wait(60) is not None  # killed by the sweep of the next lease
            assert pids_of_uid(uid) == []
    finally:
        if straggler.poll() is None:
            straggler.kill()
            straggler.wait()


# ---------------------------------------------------------------- the result stream
FORGER = r"""
import json, os, struct, sys
fd = int(sys.argv[1])
def send(head, payload=b""):
    h = json.dumps(head).encode()
    os.write(fd, struct.pack(">II", len(h), len(payload)) + h + payload)
STREAM
os._exit(0)
"""


def forged(stream: str) -> str:
    return FORGER.replace("STREAM", stream)


@pytest.mark.parametrize(
    "stream",
    [
        "send({'ev': 'res', 'i': 0, 'status': 'ok', 't': 'x'}, b'\\xff\\xfe')",  # not UTF-8
        "os.write(fd, struct.pack('>II', 5, 0) + b'{oops')",  # header is not JSON
        "os.write(fd, struct.pack('>II', 2, 0) + b'[]')",  # header is not an object
        "os.write(fd, struct.pack('>II', 10, 1 << 30))",  # absurd payload length
        "send({'ev': 'res', 'i': 7, 'status': 'ok'}, b'3')",  # a result for a test not running
        "send({'ev': 'end'})",  # the end before any result
        "send({'ev': 'boot'})",  # a phase that is over
    ],
)
def test_a_forged_or_broken_stream_never_passes_and_never_raises(core_sandbox, stream):
    v = core_sandbox.run(forged(stream), [stdin("1\n", "3\n"), stdin("1\n", "3\n")], prelude="none")
    assert not v.passed
    assert v.tests[0].status == "runtime_error"


def test_forging_can_only_claim_outputs_and_their_times_are_clamped(core_sandbox):
    stream = "send({'ev': 'res', 'i': 0, 'status': 'ok', 't': 1e300}, b'4')\nsend({'ev': 'end'})"
    v = core_sandbox.run(forged(stream), [stdin("1\n", "3\n")], prelude="none")
    assert v.status == "wrong_answer"  # a forged output is still compared outside with the expected one
    assert v.tests[0].seconds < 60


# ---------------------------------------------------------------- shapes of runs
def test_mixed_kinds_run_in_order_in_one_call(core_sandbox):
    code = "def double(x):\n    return 2 * x\n"
    tests = [
        TestCase(kind="functional", input="2", output="4"),
        TestCase(kind="functional", input="5", output="10"),
        TestCase(kind="check", input="def check(f):\n    assert f(3) == 6\n"),
    ]
    v = core_sandbox.run(code, tests, func_name="double")
    assert v.passed, v
    v = core_sandbox.run(code.replace("2 * x", "x + 2"), tests, func_name="double")
    assert [t.status for t in v.tests] == ["passed", "wrong_answer", "skipped"]
    v = core_sandbox.run(
        code.replace("2 * x", "x + 2"), tests, func_name="double", stop_at_first_failure=False
    )
    assert [t.status for t in v.tests] == ["passed", "wrong_answer", "runtime_error"]


def test_no_tests_still_reports_a_program_that_does_not_compile(core_sandbox):
    assert core_sandbox.run("def f(:\n    pass\n", []).status == "compile_error"
    v = core_sandbox.run("def f():\n    pass\n", [])
    assert v.passed and v.tests == []


def test_a_program_that_ends_the_sandbox_while_loading(core_sandbox):
    v = core_sandbox.run(
        "import os\nos._exit(3)\ndef f(x):\n    return x\n",
        [TestCase(kind="functional", input="1", output="1")] * 2,
        func_name="f",
    )
    assert [t.status for t in v.tests] == ["runtime_error", "skipped"]
    assert core_sandbox.run(
        "def f(x):\n    return x\n", [TestCase(kind="functional", input="1", output="1")], func_name="f"
    ).passed


def test_registry_names_build_working_sandboxes():
    from memdoor.core import registry

    for name in ("bwrap", "unshare"):
        sb = registry.load("sandbox", name)(SandboxConfig(uid_base=BASE, uid_count=4, prestart=False))
        assert sb.name == name
        assert sb.run("print(input()[::-1])", [stdin("abc\n", "cba\n")]).passed


# ---------------------------------------------------------------- sandboxes started ahead
@needs_root
def test_prestarted_sandboxes_are_fresh_and_stopped_by_close():
    uids = range(BASE + 4, BASE + 8)
    sb = open_sandbox(SandboxConfig(uid_base=BASE + 4, uid_count=4, prestart=True))
    # Each candidate gets a sandbox of its own: a file left in /tmp or a module-level change never carries over.
    code = "import os\nseen = os.path.exists('/tmp/mark')\nopen('/tmp/mark', 'w').close()\nprint(seen)"
    outputs = [sb.run(code, [stdin("", None)], prelude="none").tests[0].output for _ in range(4)]
    assert outputs == ["False\n"] * 4
    deadline = time.monotonic() + 60  # started in a thread: slow on a loaded machine
    while not any(pids_of_uid(u) for u in uids) and time.monotonic() < deadline:
        time.sleep(0.05)  # the next candidate's sandbox is waiting
    assert any(pids_of_uid(u) for u in uids)
    sb.close()
    # A killed pid namespace's other processes exit as the kernel gets to them: on a loaded machine that
    # takes a moment after close() returns (seen in a full run), so wait for it rather than race it.
    deadline = time.monotonic() + 30
    while [p for u in uids for p in pids_of_uid(u)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for u in uids for p in pids_of_uid(u)] == []
    assert sb.run("print(2)", [stdin("", "2")]).passed  # still usable after close
    sb.close()
