"""Issue 11, item 1: a candidate breaking the harness's protocol gets its own non-passing verdict, nothing more.

The candidate runs in the harness's process, so it can find the result pipe (``sys.argv[1]``) and write
frames itself. Each hostile program below does that through the real sandbox; the run must end with that
candidate's ``runtime_error`` ("harness protocol violation: ..."), never raise, and the sandbox must grade
the next candidate correctly.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest
from sandbox_helpers import fn_tests, stdin_tests

from memdoor.sandbox.session import PROTOCOL_VIOLATION

# Forges frames as the harness writes them: 8 bytes (header length, payload length) + JSON header + payload.
FORGE = """
import json as _json, os as _os, struct as _struct, sys as _sys
def send(head, payload=b""):
    h = _json.dumps(head).encode()
    _os.write(int(_sys.argv[1]), _struct.pack(">II", len(h), len(payload)) + h + payload)
def raw(data):
    _os.write(int(_sys.argv[1]), data)
x = int(input())
"""
TESTS = stdin_tests(("0\n", "1\n"), ("1\n", "2\n"), ("2\n", "3\n"))  # print x + 1
LAST = len(TESTS) - 1
HONEST = "print(int(input()) + 1)"


def forged_result(i: int, answer: str) -> str:
    return f"send({{'ev': 'res', 'i': {i}, 'status': 'ok', 't': 0.0}}, {answer!r}.encode())"


# (name, program after FORGE, the test index that gets the violation)
HOSTILE = [
    # a duplicate result for the last test, then the harness's own: one frame more than the tests
    (
        "extra frame after the last result",
        f"if x == {LAST}:\n    {forged_result(LAST, '3')}\nprint(x + 1)",
        LAST,
    ),
    # the last result (forged, correct), then no end: the harness is held in a sleep
    (
        "stall before the end",
        f"print(x + 1)\nif x == {LAST}:\n    {forged_result(LAST, '3')}\n    import time\n    time.sleep(60)",
        LAST,
    ),
    (
        "exit before the end",
        f"print(x + 1)\nif x == {LAST}:\n    {forged_result(LAST, '3')}\n    _os._exit(0)",
        LAST,
    ),
    ("a result for another test", f"{forged_result(1, '2')}\nprint(x + 1)", 0),
    # results for tests 0 and 1 sent during test 0 (right answers: taken), then the harness's own for 0
    (
        "results sent ahead for tests not yet run",
        f"if x == 0:\n    {forged_result(0, '1')}\n    {forged_result(1, '2')}\nprint(x + 1)",
        2,
    ),
    ("a result for a test past the end", f"{forged_result(7, '8')}\nprint(x + 1)", 0),
    (
        "an index that is not an int",
        "send({'ev': 'res', 'i': '0', 'status': 'ok', 't': 0.0}, b'1')\nprint(x + 1)",
        0,
    ),
    ("an end too early", "send({'ev': 'end'})\nprint(x + 1)", 0),
    ("a forged boot", "send({'ev': 'boot'})\nprint(x + 1)", 0),
    ("a forged load", "send({'ev': 'load', 'status': 'ok'})\nprint(x + 1)", 0),
    ("garbage bytes", "raw(b'\\xff' * 64)\nprint(x + 1)", 0),
    ("a header that is not JSON", "raw(_struct.pack('>II', 5, 0) + b'{{{{{')\nprint(x + 1)", 0),
    (
        "a header nested too deep",
        "h = b'[' * 60000\nraw(_struct.pack('>II', len(h), 0) + h)\nprint(x + 1)",
        0,
    ),
    ("a header that is a list", "raw(_struct.pack('>II', 2, 0) + b'[]')\nprint(x + 1)", 0),
    ("an oversized payload", "raw(_struct.pack('>II', 2, 1 << 31) + b'{}')\nprint(x + 1)", 0),
]


@pytest.mark.parametrize(("name", "program", "blamed"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_protocol_violation_is_the_candidates_runtime_error(quick_sandbox, name, program, blamed):
    v = quick_sandbox.run(FORGE + program, TESTS, prelude="none")
    assert v.status == "runtime_error", v
    assert v.tests[blamed].status == "runtime_error", v
    assert v.tests[blamed].detail.startswith(PROTOCOL_VIOLATION), v
    assert [t.status for t in v.tests[:blamed]] == ["passed"] * blamed, v
    assert all(t.status == "skipped" for t in v.tests[blamed + 1 :]), v
    assert quick_sandbox.run(HONEST, TESTS, prelude="none").passed


@pytest.mark.parametrize(("name", "program", "blamed"), HOSTILE[:6], ids=[h[0] for h in HOSTILE[:6]])
def test_with_every_test_run_the_other_tests_keep_their_results(quick_sandbox, name, program, blamed):
    """Running all tests: a violation fails the test it happened in; the others run in a fresh sandbox."""
    v = quick_sandbox.run(FORGE + program, TESTS, prelude="none", stop_at_first_failure=False)
    assert v.status == "runtime_error", v
    assert v.tests[blamed].detail.startswith(PROTOCOL_VIOLATION), v
    assert len(v.tests) == len(TESTS) and "skipped" not in {t.status for t in v.tests}, v


def test_forged_frames_in_livecodebench_and_functional_programs(quick_sandbox):
    """The same through the LiveCodeBench prelude (its guard does not stop ``os.write``) and a function."""
    code = FORGE.replace("x = int(input())\n", "") + (
        "def f(x):\n    send({'ev': 'res', 'i': 1, 'status': 'ok', 't': 0.0}, b'2')\n    return x + 1\n"
    )
    v = quick_sandbox.run(code, fn_tests(("0", "1"), ("1", "2")), func_name="f", prelude="livecodebench")
    assert v.status == "runtime_error" and v.tests[0].detail.startswith(PROTOCOL_VIOLATION), v
    v = quick_sandbox.run(FORGE + "send({'ev': 'end'})\nprint(x + 1)", TESTS, prelude="livecodebench")
    assert v.status == "runtime_error" and v.tests[0].detail.startswith(PROTOCOL_VIOLATION), v


def test_frames_forged_while_the_program_loads(quick_sandbox):
    """Top-level code runs while the harness loads the program: a frame sent then is the load's failure (or,
    a forged 'load', the first test's)."""
    head = FORGE.replace("x = int(input())\n", "")
    for forged in (
        "send({'ev': 'load', 'status': 'ok'})",
        "send({'ev': 'res', 'i': 0, 'status': 'ok'}, b'1')",
    ):
        code = head + forged + "\ndef f(x):\n    return x + 1\n"
        v = quick_sandbox.run(code, fn_tests(("0", "1"), ("1", "2")), func_name="f", prelude="livecodebench")
        assert v.status == "runtime_error" and v.tests[0].detail.startswith(PROTOCOL_VIOLATION), v
        assert v.tests[1].status == "skipped", v
    # a forged 'load' is taken for the harness's: then the harness's own comes while test 0 runs
    assert "while the program was loading" in v.tests[0].detail, v


def test_a_frame_trickled_past_the_deadline_does_not_extend_the_time_limit(quick_sandbox):
    """A candidate keeping the result pipe busy (a frame written a byte at a time) still runs out of time:
    past the deadline only a result already arriving is read, for at most ``LATE_GRACE_S``."""
    program = (
        "import time\n"
        'h = b\'{"ev": "res", "i": 0, "status": "ok", "t": 0.0}\'\n'
        "raw(_struct.pack('>II', len(h), 1 << 20) + h)\n"
        "while True:\n"
        "    raw(b' ')\n"
        "    time.sleep(0.001)\n"
    )
    v = quick_sandbox.run(FORGE + program, TESTS, prelude="none")
    assert v.status == "time_limit", v


def test_a_supervisor_kept_from_running_still_takes_a_result_given_in_time():
    """Issue 11, item 2: the supervisor's threads share the GIL. Here the test itself holds the GIL (as a long
    parse in another grading thread would) from before the candidate answers until after its deadline; the
    result was in the pipe in time, so the candidate passes instead of getting a time limit."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig(timeout_s=6.0, prestart=False)) as sb:
        assert sb.run(HONEST, TESTS[:1], prelude="none").passed  # warm: interpreter files cached
        program = "import time\ntime.sleep(1.5)\nprint(int(input()) + 1)"
        box: list = []
        runner = threading.Thread(target=lambda: box.append(sb.run(program, TESTS[:1], prelude="none")))
        interval = sys.getswitchinterval()
        runner.start()
        time.sleep(0.8)  # the candidate is sleeping; the supervisor waits in poll() for its answer
        sys.setswitchinterval(1000.0)  # no thread switch until this thread blocks: the supervisor starves
        try:
            end = time.monotonic() + 9.0  # past the deadline (at most 6.8 s from now)
            while time.monotonic() < end:
                pass
        finally:
            sys.setswitchinterval(interval)
        runner.join(60)
    assert box and box[0].passed, box


MALFORMED = [
    h for h in HOSTILE if h[0] in ("garbage bytes", "a header that is not JSON", "an oversized payload")
]


@pytest.mark.parametrize(("name", "program", "blamed"), MALFORMED, ids=[h[0] for h in MALFORMED])
def test_a_slow_supervisor_reading_good_frames_and_a_forgery_at_once_blames_the_candidate(
    quick_sandbox, monkeypatch, name, program, blamed
):
    """When the supervisor falls behind (a loaded machine), one read returns the harness's boot, job and
    load frames and the candidate's malformed bytes together: the good frames still count, so the run is
    the candidate's runtime_error — not a sandbox that 'did not start' three times (a failure seen in CI)."""
    from memdoor.sandbox import pipes

    real = pipes.Pipes.__init__

    def late(self, proc, results_fd, job):
        real(self, proc, results_fd, job)
        assert os.write(self.stdin_fd, job) == len(job)  # the whole job at once (it fits the pipe) ...
        self.pending = memoryview(b"")
        self.poller.unregister(self.stdin_fd)
        proc.stdin.close()
        self.stdin_fd = -1
        time.sleep(0.5)  # ... then look away: boot, job, load and the forgery all wait for the first read

    monkeypatch.setattr(pipes.Pipes, "__init__", late)
    v = quick_sandbox.run(FORGE + program, TESTS, prelude="none")
    assert v.status == "runtime_error" and v.tests[blamed].detail.startswith(PROTOCOL_VIOLATION), v
