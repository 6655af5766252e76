"""Running the parts of one model call concurrently (e.g. ``n`` completions as ``n`` requests)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def all_or_nothing(calls: Sequence[Awaitable[T]]) -> list[T]:
    """Run ``calls`` concurrently, results in order. On the first failure (or when cancelled) cancel the
    rest, so they free their slots, and raise it: a call is answered whole or not at all."""
    tasks = [asyncio.ensure_future(c) for c in calls]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION) if tasks else (set(), set())
        for t in tasks:
            if t in done and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
        return [t.result() for t in tasks]
    finally:
        for t in tasks:
            if not t.done():
                t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
