"""Budgets: limits, and room held by calls in flight so that concurrent calls cannot overshoot together."""

from __future__ import annotations

import pytest

from memdoor.agents.team import prompt_estimate
from memdoor.core.budget import MIN_COMPLETION, Budget, BudgetTracker
from memdoor.core.errors import BudgetExceeded


def test_unlimited_tokens_hold_nothing():
    b = BudgetTracker(Budget())
    assert b.reserve(10_000, 512) == (512, 0) and b.reserved == 0


def test_concurrent_calls_share_what_is_left():
    b = BudgetTracker(Budget(tokens=1000))
    assert b.reserve(100, 512) == (512, 612)
    assert b.reserve(100, 512) == (288, 388)  # the rest, after the first call's hold
    with pytest.raises(BudgetExceeded) as e:
        b.reserve(100, 512)  # nothing left for a third concurrent call
    assert (e.value.what, e.value.spent, e.value.limit) == ("tokens", 1000, 1000)
    b.release(612)
    b.charge(300)  # the first call ended: its real cost is charged, its hold given back
    assert b.reserve(100, 512) == (212, 312)


def test_n_completions_split_the_room():
    b = BudgetTracker(Budget(tokens=1000))
    assert b.reserve(0, 512, n=4) == (250, 1000)


def test_a_call_that_could_not_write_the_minimum_is_refused():
    b = BudgetTracker(Budget(tokens=100))
    with pytest.raises(BudgetExceeded):
        b.reserve(100 - MIN_COMPLETION + 1, 512)
    assert b.reserve(100 - MIN_COMPLETION, 512) == (MIN_COMPLETION, 100)


def test_exhausted_by_calls_and_seconds():
    now = [0.0]
    b = BudgetTracker(Budget(tokens=10, calls=2, seconds=5.0), clock=lambda: now[0])
    assert b.exhausted() is None
    b.charge(4)
    b.charge(4)
    assert "calls" in str(b.exhausted())
    b = BudgetTracker(Budget(seconds=5.0), clock=lambda: now[0])
    now[0] = 6.0
    with pytest.raises(BudgetExceeded):
        b.check()


def test_prompt_estimate_counts_characters():
    assert (
        prompt_estimate([{"role": "user", "content": "x" * 400}, {"role": "system", "content": None}]) == 100
    )
