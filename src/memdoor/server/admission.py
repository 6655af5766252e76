"""Run slots and a bounded waiting queue: who runs a team now, who waits, who is turned away (429).

At most ``slots`` requests run teams at once; at most ``queue`` more wait for a slot, in arrival
order (asyncio's semaphore is fair). A request arriving when both are full is refused at once with
:class:`~memdoor.server.errors.QueueFull`, before any work is done for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from memdoor.server.errors import QueueFull


class Admission:
    """Counts admitted requests (running + waiting) against ``slots + queue``. One per server."""

    def __init__(self, slots: int, queue: int, *, retry_after_s: int = 0):
        if slots < 1 or queue < 0:
            raise ValueError("slots must be at least 1 and queue at least 0")
        self.slots = slots
        self.queue = queue
        self.retry_after_s = retry_after_s
        self._running = 0
        self._admitted = 0
        self._sem = asyncio.Semaphore(slots)

    @property
    def running(self) -> int:
        """Requests running a team now."""
        return self._running

    @property
    def waiting(self) -> int:
        """Requests admitted and waiting for a slot."""
        return self._admitted - self._running

    def admit(self) -> Ticket:
        """A ticket for one request, or QueueFull when ``slots + queue`` requests are already in."""
        if self._admitted >= self.slots + self.queue:
            raise QueueFull(
                f"the server is busy: {self._running} team(s) running and {self.waiting} request(s) "
                f"waiting (limit {self.queue}); retry later",
                retry_after_s=self.retry_after_s,
            )
        self._admitted += 1
        return Ticket(self)


class Ticket:
    """One admitted request: wait for a slot with :meth:`slot`; :meth:`release` when done (idempotent)."""

    def __init__(self, admission: Admission):
        self._admission = admission
        self._released = False

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Wait for a run slot (cancellable), hold it for the block."""
        adm = self._admission
        async with adm._sem:
            adm._running += 1
            try:
                yield
            finally:
                adm._running -= 1

    def release(self) -> None:
        """The request is finished (answered, failed or cancelled): it no longer counts."""
        if not self._released:
            self._released = True
            self._admission._admitted -= 1
