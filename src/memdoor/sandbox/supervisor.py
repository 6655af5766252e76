"""The trusted side of a run: start one sandbox per candidate, stream its results, compare, time, kill.

The harness inside the sandbox loads the candidate once and runs its tests in order, sending each raw
result over a pipe. The supervisor compares each result with the expected output (which never enters the
sandbox), enforces the wall-clock deadline of each test by watching the stream, and kills the whole
sandbox at the first failure (when asked to stop there) or at a timeout. A run that ends early with tests
left (a crash, a timeout) continues in a fresh sandbox from the next test when all tests must run.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import struct
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memdoor.core.errors import SandboxError, UsageError
from memdoor.core.verdict import Status, TestResult, Verdict
from memdoor.sandbox import compare
from memdoor.sandbox.cgroups import Cgroups
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.prestart import Prestarter, Started
from memdoor.sandbox.program import compile_harness, harness_source
from memdoor.sandbox.uids import Lease, UidPool, kill_tree, reap_uid, tasks_of_uid

if TYPE_CHECKING:
    from memdoor.core.problem import TestCase

_HEAD = struct.Struct(">II")
_MAX_HEADER = 64 * 1024
_START_RETRIES = 2
TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # where the isolation tools are found
PROTOCOL_VIOLATION = "harness protocol violation"  # the detail's start when the candidate broke the stream
LATE_GRACE_S = 0.5  # past a deadline, how long a result already arriving may take to be read in full


def _groups(tests: Sequence[TestCase]) -> list[tuple[int, int]]:
    """[lo, hi) ranges of consecutive tests of one kind."""
    bounds, lo = [], 0
    for i in range(1, len(tests) + 1):
        if i == len(tests) or tests[i].kind != tests[lo].kind:
            bounds.append((lo, i))
            lo = i
    return bounds


def _timed_within(head: dict, limit: float) -> bool:
    """The harness reported the test's run time and it is within ``limit``."""
    t = head.get("t")
    return type(t) in (int, float) and 0 <= t <= limit


def _unexpected(ev: object, i: object, phase: str, nxt: int, n: int) -> str:
    """What was wrong with a frame the harness would not have sent (shown to users: kept short)."""
    what = f"unexpected {str(ev)[:20]!r} frame" + (f" for test {str(i)[:20]}" if ev == "res" else "")
    if phase != "test":
        return f"{what} while the program was loading"
    if nxt >= n:
        return f"{what} after the last test's result"
    return f"{what} while test {nxt} was running"


def _blame_memory(s: _Session, memory_mb: int) -> None:
    """The candidate's group was out of memory and the kernel killed one of its processes: the failure it
    caused (the sandbox dying, or an error the program saw) is a ``memory_limit``, not a runtime error."""
    detail = f"killed: the candidate's processes and files together exceeded {memory_mb} MiB"
    if s.load is not None and s.load.status == "runtime_error":
        s.load = s.load.model_copy(update={"status": "memory_limit", "detail": detail})
    elif s.results and s.results[-1][1].status == "runtime_error":
        i, last = s.results[-1]
        s.results[-1] = (i, last.model_copy(update={"status": "memory_limit", "detail": detail}))


@dataclass
class _Session:
    """What one sandbox process reported."""

    booted: bool = False
    ended: bool = False
    killed_for: str = ""  # "timeout", "failure", "protocol"
    phase: str = "boot"  # boot, load, test
    stderr: bytes = b""
    results: list[tuple[int, TestResult]] = field(default_factory=list)
    load: TestResult | None = None


class _FrameReader:
    """Splits the harness's byte stream into (header, payload) frames, and says where it stops making sense.

    A chunk can hold the harness's good frames followed by bytes a candidate forged (a slow supervisor reads
    boot, job, load and the forgery at once): the good frames are returned with the error, so that each is
    judged in its phase (the forgery is then the candidate's, not a sandbox that did not start)."""

    def __init__(self, max_payload: int):
        self.buf = bytearray()
        self.max_payload = max_payload

    def feed(self, chunk: bytes) -> tuple[list[tuple[dict, bytes]], str | None]:
        """(the whole frames now readable, the reason the stream is malformed after them or None)."""
        self.buf += chunk
        frames = []
        while len(self.buf) >= _HEAD.size:
            hlen, plen = _HEAD.unpack_from(self.buf)
            if hlen > _MAX_HEADER or plen > self.max_payload:
                return frames, "result stream too large or malformed"
            end = _HEAD.size + hlen + plen
            if len(self.buf) < end:
                break
            try:
                head = json.loads(bytes(self.buf[_HEAD.size : _HEAD.size + hlen]))
            except (ValueError, RecursionError):  # not JSON, or nested too deep: malformed
                return frames, "malformed result stream"
            if not isinstance(head, dict):
                return frames, "malformed result stream"
            frames.append((head, bytes(self.buf[_HEAD.size + hlen : end])))
            del self.buf[:end]
        return frames, None


class _Pipes:
    """The sandbox's pipes: the job written to its stdin, its stderr kept (a little), results read.

    ``looked``: a time at which the results pipe was seen with nothing new in it (a lower bound: the last
    look was at or after it)."""

    def __init__(self, proc: subprocess.Popen, results_fd: int, job: bytes):
        self.proc, self.r = proc, results_fd
        self.looked = time.monotonic()
        self.stdin_fd, self.err_fd = proc.stdin.fileno(), proc.stderr.fileno()
        os.set_blocking(self.stdin_fd, False)
        self.pending = memoryview(job)
        self.poller = select.poll()  # not select(): fds above 1024 are common in a busy grader
        self.poller.register(results_fd, select.POLLIN)
        self.poller.register(self.err_fd, select.POLLIN)
        self.poller.register(self.stdin_fd, select.POLLOUT)

    def pump(self, wait_s: float, s: _Session) -> bytes | None:
        """Move data for up to ``wait_s`` (0: only what is there); the bytes read from the results pipe (b""
        at its end), or None."""
        wait_ms = math.ceil(wait_s * 1000)  # rounded up: a poll that times out ends at or after the deadline
        before = time.monotonic()
        try:
            ready = dict(self.poller.poll(wait_ms))
        except InterruptedError:
            self.looked = before
            return None
        if self.stdin_fd in ready:
            try:
                self.pending = self.pending[os.write(self.stdin_fd, self.pending[: 1 << 16]) :]
            except BlockingIOError:
                pass
            except OSError:  # the sandbox closed its end: it is going away, the result pipe will say
                self.pending = memoryview(b"")
            if not self.pending:
                self.poller.unregister(self.stdin_fd)
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
                self.stdin_fd = -1
        if self.err_fd in ready:
            chunk = os.read(self.err_fd, 65536)
            if not chunk:
                self.poller.unregister(self.err_fd)
                self.err_fd = -1
            elif len(s.stderr) < 8192:
                s.stderr += chunk[: 8192 - len(s.stderr)]
        if self.r not in ready:  # seen empty when poll returned: at its timeout, or when another fd woke it
            self.looked = before + (0.0 if ready else wait_ms / 1000)
            return None
        return os.read(self.r, 1 << 20)


class Supervisor:
    """Runs candidates in an isolation tool. Subclasses say how to start the harness (``command``)."""

    name = "none"

    def __init__(self, config: SandboxConfig | None = None):
        config = config or SandboxConfig()
        self.config = config
        self.harness = harness_source()
        self.harness_file = compile_harness(config, self.harness)  # None: pass the source with -c
        self.run_as_root = os.geteuid() == 0
        self._slots = threading.BoundedSemaphore(config.workers)
        self._uids = UidPool(config.uid_base, config.uid_count, config.lock_dir) if self.run_as_root else None
        # A control group per sandbox process (memory, pids, CPU of the candidate together); None: rlimits only.
        self.cgroups = Cgroups.open() if config.cgroups else None
        self._prestarter = Prestarter(self, config.workers) if config.prestart else None
        if self._prestarter is not None:
            weakref.finalize(self, self._prestarter.close)

    def close(self) -> None:
        """Stop the sandboxes started ahead (they hold uids). The object stays usable."""
        if self._prestarter is not None:
            self._prestarter.close()
            self._prestarter = Prestarter(self, self.config.workers)
            weakref.finalize(self, self._prestarter.close)

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ to be provided by isolation tools
    def check_tools(self) -> None:
        """Raise SandboxError when the tools this isolation needs are missing."""

    def command(self, uid: int | None, args: list[str]) -> list[str]:
        """The command line that starts the harness with ``args`` (result fd, expected prelude) as ``uid``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ public API
    def run(
        self,
        code: str,
        tests: Sequence[TestCase],
        *,
        func_name: str | None = None,
        prelude: str = "none",
        stop_at_first_failure: bool = True,
    ) -> Verdict:
        """Run ``code`` against ``tests`` and return the verdict. Thread-safe.

        Consecutive tests of one kind share one sandbox process (a HumanEval problem's functional examples
        then its ``check`` test use two). Raises SandboxError only when the sandbox itself cannot start,
        never for anything the candidate does.
        """
        tests = list(tests)
        if prelude not in ("livecodebench", "none"):
            raise UsageError(f"unknown prelude {prelude!r} (livecodebench or none)")
        started = time.monotonic()
        results: list[TestResult | None] = [None] * len(tests)
        with self._slots:
            ahead = self._prestarter.take() if self._prestarter is not None else None
            lease = ahead.lease if ahead is not None else self.acquire_uid()
            if self._prestarter is not None:
                self._prestarter.request(prelude)  # the next candidate's sandbox starts while this one runs
            try:
                if not tests:  # nothing to run: only check that the program compiles
                    s = self._session(lease, "stdin", code, func_name, "none", [], 0, True, ahead)
                    return self._verdict([], started, override=s.load.status if s.load else None)
                for lo, hi in _groups(tests):
                    part = self._run_group(
                        lease, code, func_name, prelude, tests[lo:hi], stop_at_first_failure, ahead
                    )
                    ahead = None
                    results[lo:hi] = part
                    if stop_at_first_failure and any(r is not None and r.status != "passed" for r in part):
                        break
                return self._verdict(results, started)
            finally:
                if ahead is not None:  # not used (the run raised before starting)
                    ahead.lease = None
                    ahead.discard()
                if lease is not None:
                    lease.clean = not lease.residue
                    UidPool.release(lease)

    def _run_group(self, lease, code, func_name, prelude, tests, stop, ahead) -> list[TestResult | None]:
        """Run tests of one kind, in as many sandbox sessions as crashes and timeouts require."""
        kind = tests[0].kind
        results: list[TestResult | None] = [None] * len(tests)
        first = 0
        while True:
            s = self._session(lease, kind, code, func_name, prelude, tests, first, stop, ahead)
            ahead = None
            for i, r in s.results:
                results[i] = r
            if s.load is None and results[first] is None:  # cannot happen (every end is recorded); never loop
                results[first] = TestResult(
                    status="runtime_error", detail="the sandbox ended without a result"
                )
            if s.load is not None:  # the program did not load: that status applies to every test
                for i in range(first, len(tests)):
                    results[i] = s.load if (i == first or not stop) else None
                return results
            failed = any(r.status != "passed" for _, r in s.results)
            nxt = next((i for i in range(first, len(tests)) if results[i] is None), len(tests))
            if nxt >= len(tests) or (failed and stop):
                return results
            first = nxt

    # ------------------------------------------------------------------ internals
    def acquire_uid(self) -> Lease | None:
        """A uid of our own for one candidate (None when not root: candidates run as our uid)."""
        return self._uids.acquire() if self._uids is not None else None

    def spawn(self, lease: Lease | None, prelude: str = "none") -> Started:
        """Start a sandbox; its harness boots (loading ``prelude``'s modules) and waits for its job on stdin."""
        c = self.config
        group = (
            self.cgroups.candidate_group(c.memory_mb, c.max_processes, c.cpu_cores)
            if self.cgroups is not None
            else None
        )
        r, w = os.pipe()
        try:
            command = self.command(lease.uid if lease else None, [str(w), prelude])
            proc = subprocess.Popen(
                group.wrap(command) if group is not None else command,  # joins the group, then execs
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(w,),
                env={"PATH": TOOL_PATH},
                start_new_session=True,
            )
        except OSError as e:
            os.close(r)
            if group is not None:
                group.remove()
            raise SandboxError(f"cannot start the {self.name} sandbox: {e}") from e
        finally:
            os.close(w)
        return Started(proc, r, lease, group)

    def _verdict(
        self, results: list[TestResult | None], started: float, override: Status | None = None
    ) -> Verdict:
        return Verdict.of(results, time.monotonic() - started, self.name, override)

    def _job(self, kind: str, code: str, func_name: str | None, prelude: str, tests, first: int) -> bytes:
        c = self.config
        limits = {
            "as": c.memory_mb << 20,
            "fsize": c.max_file_mb << 20,
            "cpu": int(c.timeout_s * (len(tests) - first + 1)) + 5,
            "core": 0,
        }
        if self._uids is not None:
            limits["nproc"] = c.max_processes
        else:  # our own uid: RLIMIT_NPROC also counts our other tasks, so allow for them (best effort)
            limits["nproc"] = tasks_of_uid(os.getuid()) + c.max_processes * c.workers
        job = {
            "kind": kind,
            "prelude": prelude,
            "code": code,
            "func_name": func_name,
            "first": first,
            "inputs": [t.input for t in tests[first:]],
            "max_output": c.max_output_bytes,
            "limits": limits,
        }
        return json.dumps(job).encode("utf-8", "surrogatepass")

    def _session(self, lease, kind, code, func_name, prelude, tests, first, stop, ahead=None) -> _Session:
        job = self._job(kind, code, func_name, prelude, tests, first)
        for attempt in range(_START_RETRIES + 1):
            started = ahead if attempt == 0 and ahead is not None else self.spawn(lease, prelude)
            s = self._attempt(lease, started, job, tests, first, stop)
            if s.booted:
                return s
            if attempt == _START_RETRIES:
                err = s.stderr.decode(errors="replace").strip().splitlines()
                raise SandboxError(f"the {self.name} sandbox did not start" + (f": {err[-1]}" if err else ""))
            time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    def _attempt(self, lease, started: Started, job: bytes, tests, first: int, stop: bool) -> _Session:
        s = _Session()
        proc, r = started.proc, started.results_fd
        abnormal = True
        try:
            self._converse(proc, r, job, tests, first, stop, s)
            abnormal = not s.ended
            if s.ended:  # the harness is exiting by itself: its namespace dies with it
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5)
        finally:
            started.close_results()
            kill_tree(proc)
            for pipe in (proc.stdin, proc.stderr):
                with contextlib.suppress(OSError):
                    pipe.close()
            if abnormal and lease is not None and not reap_uid(lease.uid):
                lease.residue = True
            if started.oom_killed():
                _blame_memory(s, self.config.memory_mb)
            started.close_group()
        return s

    def _converse(self, proc, r: int, job: bytes, tests, first: int, stop: bool, s: _Session) -> None:
        """Feed the job, read the result stream, judge each result, until the run ends or must be cut.

        The candidate runs in the harness's process and can write to the result pipe itself: a frame the
        harness would not send at that point ends the run as the candidate's ``runtime_error``; nothing in
        the stream can raise out of here. Deadlines hold when this thread runs late (docs/sandbox.md,
        "Deadlines"): past a deadline the pipe is read before a time limit is declared, and a result found
        late counts only when the harness timed it within the limit."""
        c = self.config
        n = len(tests)
        io = _Pipes(proc, r, job)
        reader = _FrameReader(max_payload=c.max_output_bytes + (1 << 20))
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
                    self._timed_out(s, nxt, n, now - mark)
                    return
            chunk = io.pump(min(max(deadline - now, 0.0), 1.0), s)
            if chunk is None:
                continue
            if not chunk:  # the sandbox is gone
                self._died(proc, s, nxt, n, time.monotonic() - mark)
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
                        self._record(s, nxt, n, TestResult(status=status, seconds=now - mark, detail=detail))
                        return
                    s.phase = "test"
                elif ev == "res" and s.phase == "test" and nxt < n and type(i) is int and i == nxt:
                    if now > deadline and not _timed_within(head, c.timeout_s):  # late, and not by our fault
                        s.killed_for = "timeout"
                        self._timed_out(s, nxt, n, now - mark)
                        return
                    result = self._judge_safely(tests[nxt], head, payload, now - mark)
                    s.results.append((nxt, result))
                    nxt += 1
                    if result.status != "passed" and stop:
                        s.killed_for = "failure"
                        return
                elif ev == "end" and s.phase == "test" and nxt == n:
                    s.ended = True
                    return
                else:
                    self._violation(s, nxt, n, _unexpected(ev, i, s.phase, nxt, n))
                    return
                mark, deadline = now, now + (c.start_timeout_s if s.phase == "job" else c.timeout_s)
                late_since = None
            if broken is not None:  # after the good frames of the chunk, each judged in its phase
                self._violation(s, nxt, n, broken)
                return

    def _record(self, s: _Session, nxt: int, n: int, result: TestResult) -> None:
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

    def _violation(self, s: _Session, nxt: int, n: int, why: str) -> None:
        """The stream broke the harness's protocol: only a candidate writing to the pipe can do that."""
        s.killed_for = "protocol"
        self._record(s, nxt, n, TestResult(status="runtime_error", detail=f"{PROTOCOL_VIOLATION}: {why}"))

    def _timed_out(self, s: _Session, nxt: int, n: int, seconds: float) -> None:
        if s.phase in ("job", "load"):
            s.load = TestResult(status="time_limit", seconds=seconds, detail="loading the program timed out")
        elif s.phase == "test" and nxt >= n:
            self._violation(s, nxt, n, "the run did not end after the last result (the program stalled it)")
        else:
            self._record(
                s, nxt, n, TestResult(status="time_limit", seconds=seconds, detail="wall-clock limit")
            )

    def _judge_safely(self, test: TestCase, head: dict, payload: bytes, elapsed: float) -> TestResult:
        # The stream comes from the sandbox, where the candidate could have forged it: never trust it.
        try:
            return self._judge(test, head, payload, elapsed)
        except Exception as e:
            return TestResult(status="runtime_error", detail=f"unreadable result ({type(e).__name__})")

    def _died(self, proc, s: _Session, nxt: int, n: int, seconds: float) -> None:
        try:
            code = proc.wait(2)
        except subprocess.TimeoutExpired:
            code = None
        status = f" (exit status {code})" if code is not None else ""
        if s.phase == "test" and nxt >= n:  # after the last result: the harness would have ended the run
            self._violation(s, nxt, n, "the sandbox ended without ending the run" + status)
            return
        died = TestResult(
            status="runtime_error", seconds=seconds, detail="the program ended the sandbox" + status
        )
        self._record(s, nxt, n, died)

    def _judge(self, test: TestCase, head: dict, payload: bytes, elapsed: float) -> TestResult:
        """The result of one test from the harness's report; ``elapsed`` is the supervisor's own measure."""
        c = self.config
        reported = head.get("t")
        seconds = (
            float(reported) if isinstance(reported, int | float) and 0 <= reported <= elapsed else elapsed
        )
        status = head.get("status")
        detail = str(head.get("detail", ""))[:500]
        if status != "ok":
            bad: Status = status if status in ("memory_limit", "time_limit") else "runtime_error"
            return TestResult(status=bad, seconds=seconds, detail=detail)
        if head.get("overflow"):
            return TestResult(
                status="wrong_answer", seconds=seconds, detail=f"output exceeds {c.max_output_bytes} bytes"
            )
        if test.kind == "check":
            return TestResult(status="passed", seconds=seconds)
        if test.kind == "stdin":
            text = payload.decode("utf-8", "surrogatepass")
            shown = compare.keep(text, c.keep_output_chars)
            if test.output is None:
                return TestResult(status="passed", seconds=seconds, output=shown)
            ok, why = compare.stdin_matches(text, test.output)
            return TestResult(
                status="passed" if ok else "wrong_answer", seconds=seconds, output=shown, detail=why
            )
        try:
            value = compare.decode_value(payload)
        except ValueError as e:
            return TestResult(status="runtime_error", seconds=seconds, detail=str(e))
        shown = compare.keep(compare.value_text(value, payload), c.keep_output_chars)
        if test.output is None:
            return TestResult(status="passed", seconds=seconds, output=shown)
        ok, why = compare.functional_matches(value, test.output)
        return TestResult(
            status="passed" if ok else "wrong_answer", seconds=seconds, output=shown, detail=why
        )
