"""memdoor.review.threads.in_thread: a cancelled caller sets the work's cancel event and returns only once the
work has returned, so what the caller releases afterwards is never released during the work."""

from __future__ import annotations

import asyncio
import threading

import pytest

from memdoor.review.threads import in_thread


async def test_the_result_comes_back_and_the_event_stays_clear():
    seen = []

    def work(cancel: threading.Event) -> int:
        seen.append(cancel.is_set())
        return 42

    assert await in_thread(work) == 42
    assert seen == [False]


async def test_an_error_of_the_work_reaches_the_caller():
    def work(cancel: threading.Event) -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        await in_thread(work)


async def test_a_cancelled_caller_waits_for_the_work_to_return_before_it_is_cancelled():
    started, finished = threading.Event(), threading.Event()
    order = []

    def work(cancel: threading.Event) -> str:
        started.set()
        assert cancel.wait(timeout=30), "the cancel event was never set"
        order.append("work returned")
        finished.set()
        return "stopped early"

    async def caller() -> None:
        try:
            await in_thread(work)
        finally:
            order.append("caller released")

    task = asyncio.ensure_future(caller())
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set()
    assert order == ["work returned", "caller released"]


async def test_cancelling_twice_still_waits_and_an_error_after_cancel_is_not_raised():
    started, release = threading.Event(), threading.Event()

    def work(cancel: threading.Event) -> None:
        started.set()
        assert cancel.wait(timeout=30), "the cancel event was never set"
        release.wait(timeout=30)
        raise RuntimeError("after cancel")

    task = asyncio.ensure_future(in_thread(work))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done()  # still waiting for the work
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
