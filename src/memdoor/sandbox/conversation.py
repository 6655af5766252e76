"""The conversation with one sandbox process: feed it the job, read its frames in order, judge each result.

The harness's frames come in phases (boot, job, load, one result per test, end), each with a deadline.
:func:`converse` follows them until the run ends or must be cut (a failure when asked to stop there, a
timeout, the sandbox gone, a frame the harness would not send); the session records what happened.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memdoor.core.verdict import TestResult
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.pipes import FrameReader, Pipes
from memdoor.sandbox.result import judge_safely
from memdoor.sandbox.session import Session, died, record, timed_out, unexpected, violation

if TYPE_CHECKING:
    from memdoor.core.problem import TestCase

LATE_GRACE_S = 0.5  # past a deadline, how long a result already arriving may take to be read in full


def timed_within(head: dict, limit: float) -> bool:
    """The harness reported the test's run time and it is within ``limit``."""
    t = head.get("t")
    return type(t) in (int, float) and 0 <= t <= limit


def converse(
    config: SandboxConfig,
    proc: subprocess.Popen,
    r: int,
    job: bytes,
    tests: Sequence[TestCase],
    first: int,
    stop: bool,
    s: Session,
) -> None:
    """Feed the job, read the result stream, judge each result, until the run ends or must be cut.

    The candidate runs in the harness's process and can write to the result pipe itself: a frame the
    harness would not send at that point ends the run as the candidate's ``runtime_error``; nothing in
    the stream can raise out of here. Deadlines hold when this thread runs late (docs/sandbox.md,
    "Deadlines"): past a deadline the pipe is read before a time limit is declared, and a result found
    late counts only when the harness timed it within the limit."""
    c = config
    n = len(tests)
    io = Pipes(proc, r, job)
    reader = FrameReader(max_payload=c.max_output_bytes + (1 << 20))
    nxt = first
    mark = io.looked  # when the current phase (boot, job, load, a test) started
    deadline = mark + c.start_timeout_s
    late_since = None  # when this thread first ran past the deadline
    while True:
        now = time.monotonic()
        if now >= deadline:
            late_since = now if late_since is None else late_since
            if io.looked >= deadline or now >= late_since + LATE_GRACE_S:
                s.killed_for = "timeout"
                timed_out(s, nxt, n, now - mark)
                return
        chunk = io.pump(min(max(deadline - now, 0.0), 1.0), s)
        if chunk is None:
            continue
        if not chunk:  # the sandbox is gone
            died(proc, s, nxt, n, time.monotonic() - mark)
            return
        frames, broken = reader.feed(chunk)
        for head, payload in frames:
            now = time.monotonic()
            ev, i = head.get("ev"), head.get("i")
            if ev == "boot" and s.phase == "boot":
                s.booted, s.phase = True, "job"
            elif ev == "job" and s.phase == "job":
                s.phase = "load"
            elif ev == "load" and s.phase == "load":
                status = head.get("status")
                if status != "ok":
                    status = status if status in ("compile_error", "memory_limit") else "runtime_error"
                    detail = str(head.get("detail", ""))[:500]
                    record(s, nxt, n, TestResult(status=status, seconds=now - mark, detail=detail))
                    return
                s.phase = "test"
            elif ev == "res" and s.phase == "test" and nxt < n and type(i) is int and i == nxt:
                if now > deadline and not timed_within(head, c.timeout_s):  # late, and not by our fault
                    s.killed_for = "timeout"
                    timed_out(s, nxt, n, now - mark)
                    return
                result = judge_safely(c, tests[nxt], head, payload, now - mark)
                s.results.append((nxt, result))
                nxt += 1
                if result.status != "passed" and stop:
                    s.killed_for = "failure"
                    return
            elif ev == "end" and s.phase == "test" and nxt == n:
                s.ended = True
                return
            else:
                violation(s, nxt, n, unexpected(ev, i, s.phase, nxt, n))
                return
            mark, deadline = now, now + (c.start_timeout_s if s.phase == "job" else c.timeout_s)
            late_since = None
        if broken is not None:  # after the good frames of the chunk, each judged in its phase
            violation(s, nxt, n, broken)
            return
