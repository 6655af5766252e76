"""Sandboxes started ahead of their candidate, so that a candidate does not wait for the interpreter to start.

A prestarted sandbox is a fresh one that has run no candidate code: its harness has booted (interpreter and
prelude modules loaded) and waits for its job. Each still serves exactly one candidate. They are spawned
from one long-lived thread of their own because a sandbox dies with the thread that started it
(``bwrap --die-with-parent`` uses the parent-death signal, which follows the starting thread).
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import subprocess
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from memdoor.core.errors import SandboxError
from memdoor.sandbox.cgroups import Group
from memdoor.sandbox.uids import Lease, UidPool, kill_tree, reap_uid

_CLOSE_WAIT_S = 60.0  # close() waits at most this long for a sandbox being started to be discarded


@dataclass
class Started:
    """A started sandbox: its process, the read end of its result pipe, the uid it holds and the control
    group all its processes are in (None: rlimits only)."""

    proc: subprocess.Popen
    results_fd: int
    lease: Lease | None
    group: Group | None = None

    def discard(self) -> None:
        """Kill it, give its uid back and remove its group."""
        kill_tree(self.proc)
        self.close_results()
        for closer in (self.proc.stdin.close, self.proc.stderr.close):
            with contextlib.suppress(OSError):
                closer()
        if self.lease is not None:
            self.lease.clean = reap_uid(self.lease.uid)
            UidPool.release(self.lease)
        self.close_group()

    def close_results(self) -> None:
        """Close the result pipe once (a second close could hit another sandbox's pipe that reused the fd)."""
        fd, self.results_fd = self.results_fd, -1
        if fd >= 0:
            os.close(fd)

    def oom_killed(self) -> bool:
        """The kernel killed a process of this sandbox because its group ran out of memory."""
        return self.group is not None and self.group.oom_killed()

    def close_group(self) -> None:
        """Remove the group (killing anything left in it); its processes must be gone or going."""
        if self.group is not None:
            self.group.remove()
            self.group = None


class Prestarter:
    """Keeps up to ``size`` prestarted sandboxes of ``owner`` (its ``acquire_uid`` and ``spawn``)."""

    def __init__(self, owner: object, size: int):
        self._owner = weakref.ref(owner)  # never keeps the sandbox object alive
        self._size = size
        self._ready: collections.deque[Started] = collections.deque()
        self._lock = threading.Lock()
        self._wanted = 0
        self._requests: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._closed = False
        self._thread: threading.Thread | None = None

    def take(self) -> Started | None:
        """A prestarted sandbox that is still alive, or None."""
        while True:
            with self._lock:
                started = self._ready.popleft() if self._ready else None
            if started is None:
                return None
            if started.proc.poll() is None:
                return started
            started.discard()

    def request(self, prelude: str) -> None:
        """Start one more in the background (expecting ``prelude``), unless ``size`` are ready or coming."""
        with self._lock:
            if self._closed or len(self._ready) + self._wanted >= self._size:
                return
            self._wanted += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="memdoor-sandbox-prestart", daemon=True
                )
                self._thread.start()
        self._requests.put(prelude)

    def close(self) -> None:
        """Kill the prestarted sandboxes and stop the thread (also run when the sandbox object is collected)."""
        with self._lock:
            self._closed = True
            ready, self._ready = list(self._ready), collections.deque()
        for started in ready:  # before the thread ends: a sandbox dies (unreaped) with its starting thread
            started.discard()
        self._requests.put(None)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(_CLOSE_WAIT_S)  # one being started now is discarded by the thread: wait for it

    def _loop(self) -> None:
        while (prelude := self._requests.get()) is not None:
            with self._lock:
                if self._closed:  # requests queued before close: start nothing more
                    self._wanted -= 1
                    continue
            owner = self._owner()
            if owner is None:
                return
            started = self._start(owner.acquire_uid, lambda lease, o=owner: o.spawn(lease, prelude))
            del owner
            with self._lock:
                self._wanted -= 1
                if started is not None and not self._closed:
                    self._ready.append(started)
                    started = None
            if started is not None:
                started.discard()

    @staticmethod
    def _start(
        acquire: Callable[[], Lease | None], spawn: Callable[[Lease | None], Started]
    ) -> Started | None:
        lease = acquire()
        try:
            return spawn(lease)
        except SandboxError:
            if lease is not None:
                UidPool.release(lease)
            return None
