"""The trusted side of a run: start one sandbox per candidate, stream its results, compare, time, kill.

The harness inside the sandbox loads the candidate once and runs its tests in order, sending each raw
result over a pipe. The supervisor compares each result with the expected output (which never enters the
sandbox), enforces the wall-clock deadline of each test by watching the stream, and kills the whole
sandbox at the first failure (when asked to stop there) or at a timeout. A run that ends early with tests
left (a crash, a timeout) continues in a fresh sandbox from the next test when all tests must run.

This module starts the sandboxes and puts a run together from their sessions; the rest is in rooms of its
own: one sandbox process's pipes and frames (``pipes``), the conversation with it (``conversation``), what
it reported and how an early end is recorded (``session``), and one test's result (``result``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memdoor.core.errors import SandboxError, UsageError
from memdoor.core.verdict import Status, TestResult, Verdict
from memdoor.sandbox.cgroups import Cgroups
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.conversation import converse
from memdoor.sandbox.harness import program_text
from memdoor.sandbox.prestart import Prestarter, Started
from memdoor.sandbox.program import compile_harness
from memdoor.sandbox.session import Session, blame_memory
from memdoor.sandbox.uids import Lease, UidPool, kill_tree, reap_uid, tasks_of_uid

if TYPE_CHECKING:
    from memdoor.core.problem import TestCase

_START_RETRIES = 2
TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # where the isolation tools are found


def _groups(tests: Sequence[TestCase]) -> list[tuple[int, int]]:
    """[lo, hi) ranges of consecutive tests of one kind."""
    bounds, lo = [], 0
    for i in range(1, len(tests) + 1):
        if i == len(tests) or tests[i].kind != tests[lo].kind:
            bounds.append((lo, i))
            lo = i
    return bounds


class Supervisor:
    """Runs candidates in an isolation tool. Subclasses say how to start the harness (``command``)."""

    name = "none"

    def __init__(self, config: SandboxConfig | None = None):
        config = config or SandboxConfig()
        self.config = config
        self.harness = program_text()  # passed with python -c: nothing on the host needs to be readable
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

    def _session(self, lease, kind, code, func_name, prelude, tests, first, stop, ahead=None) -> Session:
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

    def _attempt(self, lease, started: Started, job: bytes, tests, first: int, stop: bool) -> Session:
        s = Session()
        proc, r = started.proc, started.results_fd
        abnormal = True
        try:
            converse(self.config, proc, r, job, tests, first, stop, s)
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
                blame_memory(s, self.config.memory_mb)
            started.close_group()
        return s
