"""Blocking work of a review in a thread that a cancelled caller stops and waits for.

``asyncio.to_thread`` alone leaves the thread running when the awaiting task is cancelled (a served
review whose client left, or whose deadline passed): its test command went on for up to its own
time limit, its directory was removed under it, and whatever the caller held (an admission ticket)
was released while the work went on. :func:`in_thread` gives the function a ``cancel`` event, sets
it when the caller is cancelled, and returns (raising ``CancelledError``) only once the function has
returned: what the caller releases in its ``finally`` is released after the work, never during it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_thread(fn: Callable[[threading.Event], T]) -> T:
    """``fn(cancel)`` in a thread. When the caller is cancelled (once or more), ``cancel`` is set and
    the caller waits until ``fn`` has returned, then is cancelled; ``fn`` should check ``cancel`` to
    return early (a test run is killed: :func:`memdoor.review.testrun.run_tests`)."""
    cancel = threading.Event()
    work = asyncio.ensure_future(asyncio.to_thread(fn, cancel))
    cancelled = False
    while not work.done():
        try:
            await asyncio.wait({work})  # never cancels ``work`` itself
        except asyncio.CancelledError:
            cancelled = True
            cancel.set()
    if cancelled:
        if not work.cancelled():
            work.exception()  # retrieved: the caller's cancellation is what it reports
        raise asyncio.CancelledError
    return work.result()
