"""What one sandbox process reported, and how each way its run can end early is recorded.

A session is one sandbox process's part of a run: its phase (boot, job, load, test), the results of its
tests and, when the program did not load, that outcome. A run cut short (a timeout, the sandbox dying, a
stream the harness would not send, the memory limit) gets one non-passing result here, on the load or on
the test that was running.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from memdoor.core.verdict import TestResult

PROTOCOL_VIOLATION = "harness protocol violation"  # the detail's start when the candidate broke the stream


@dataclass
class Session:
    """What one sandbox process reported."""

    booted: bool = False
    ended: bool = False
    killed_for: str = ""  # "timeout", "failure", "protocol"
    phase: str = "boot"  # boot, load, test
    stderr: bytes = b""
    results: list[tuple[int, TestResult]] = field(default_factory=list)
    load: TestResult | None = None


def unexpected(ev: object, i: object, phase: str, nxt: int, n: int) -> str:
    """What was wrong with a frame the harness would not have sent (shown to users: kept short)."""
    what = f"unexpected {str(ev)[:20]!r} frame" + (f" for test {str(i)[:20]}" if ev == "res" else "")
    if phase != "test":
        return f"{what} while the program was loading"
    if nxt >= n:
        return f"{what} after the last test's result"
    return f"{what} while test {nxt} was running"


def blame_memory(s: Session, memory_mb: int) -> None:
    """The candidate's group was out of memory and the kernel killed one of its processes: the failure it
    caused (the sandbox dying, or an error the program saw) is a ``memory_limit``, not a runtime error."""
    detail = f"killed: the candidate's processes and files together exceeded {memory_mb} MiB"
    if s.load is not None and s.load.status == "runtime_error":
        s.load = s.load.model_copy(update={"status": "memory_limit", "detail": detail})
    elif s.results and s.results[-1][1].status == "runtime_error":
        i, last = s.results[-1]
        s.results[-1] = (i, last.model_copy(update={"status": "memory_limit", "detail": detail}))


def record(s: Session, nxt: int, n: int, result: TestResult) -> None:
    """Record a non-passing outcome for the current phase: the load, or test ``nxt``; when every one of
    the ``n`` tests already has its result (the run's end is missing, or more follows), the last test,
    during which the candidate's code still ran, takes it (keeping its time and output)."""
    if s.phase in ("job", "load"):
        s.load = result
    elif s.phase == "test" and nxt < n:
        s.results.append((nxt, result))
    elif s.phase == "test" and s.results:
        i, last = s.results[-1]
        s.results[-1] = (i, result.model_copy(update={"seconds": last.seconds, "output": last.output}))
    elif s.phase == "test":  # no tests at all (only loading was checked): the run's one outcome
        s.load = result


def violation(s: Session, nxt: int, n: int, why: str) -> None:
    """The stream broke the harness's protocol: only a candidate writing to the pipe can do that."""
    s.killed_for = "protocol"
    record(s, nxt, n, TestResult(status="runtime_error", detail=f"{PROTOCOL_VIOLATION}: {why}"))


def timed_out(s: Session, nxt: int, n: int, seconds: float) -> None:
    """The phase ran past its deadline: loading, test ``nxt``, or the run's end after the last result."""
    if s.phase in ("job", "load"):
        s.load = TestResult(status="time_limit", seconds=seconds, detail="loading the program timed out")
    elif s.phase == "test" and nxt >= n:
        violation(s, nxt, n, "the run did not end after the last result (the program stalled it)")
    else:
        record(s, nxt, n, TestResult(status="time_limit", seconds=seconds, detail="wall-clock limit"))


def died(proc: subprocess.Popen, s: Session, nxt: int, n: int, seconds: float) -> None:
    """The sandbox closed its result pipe before the run's end (its exit status said when known)."""
    try:
        code = proc.wait(2)
    except subprocess.TimeoutExpired:
        code = None
    status = f" (exit status {code})" if code is not None else ""
    if s.phase == "test" and nxt >= n:  # after the last result: the harness would have ended the run
        violation(s, nxt, n, "the sandbox ended without ending the run" + status)
        return
    ended = TestResult(
        status="runtime_error", seconds=seconds, detail="the program ended the sandbox" + status
    )
    record(s, nxt, n, ended)
