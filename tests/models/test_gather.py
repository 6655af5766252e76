"""A model call's parts run together and are answered whole or not at all."""

from __future__ import annotations

import asyncio

import pytest

from memdoor.core.errors import ModelUnavailable
from memdoor.models.gather import all_or_nothing


async def test_results_come_in_call_order():
    async def value(v: int, hops: int) -> int:
        for _ in range(hops):
            await asyncio.sleep(0)
        return v

    assert await all_or_nothing([value(1, 5), value(2, 0), value(3, 2)]) == [1, 2, 3]
    assert await all_or_nothing([]) == []


async def test_the_first_failure_cancels_the_rest_and_is_raised():
    never = asyncio.Event()
    cancelled = []

    async def waits() -> int:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return 0

    async def fails() -> int:
        raise ModelUnavailable("down")

    with pytest.raises(ModelUnavailable, match="down"):
        await all_or_nothing([waits(), fails(), waits()])
    assert cancelled == [True, True]
