"""Budgets: tokens, calls and wall seconds per problem, so strategies can be compared at equal cost."""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from memdoor.errors import BudgetExceeded


class Budget(BaseModel):
    """Limits for one problem. None means unlimited."""

    tokens: int | None = Field(default=None, description="Prompt + completion tokens over all calls.")
    calls: int | None = Field(
        default=None, description="Model calls (a call with n completions counts once)."
    )
    seconds: float | None = Field(default=None, description="Wall seconds from the start of the strategy.")


class BudgetTracker:
    """Tracks spending against a :class:`Budget`. Not shared between problems."""

    def __init__(self, budget: Budget | None = None, clock=time.monotonic):
        self.budget = budget or Budget()
        self._clock = clock
        self.started = clock()
        self.tokens = 0
        self.calls = 0

    @property
    def seconds(self) -> float:
        return self._clock() - self.started

    def charge(self, tokens: int, calls: int = 1) -> None:
        """Record what a call spent (always recorded, even past the limit)."""
        self.tokens += tokens
        self.calls += calls

    def exhausted(self) -> BudgetExceeded | None:
        """The first limit reached, as an error value, or None."""
        b = self.budget
        if b.tokens is not None and self.tokens >= b.tokens:
            return BudgetExceeded("tokens", self.tokens, b.tokens)
        if b.calls is not None and self.calls >= b.calls:
            return BudgetExceeded("calls", self.calls, b.calls)
        if b.seconds is not None and self.seconds >= b.seconds:
            return BudgetExceeded("seconds", round(self.seconds, 3), b.seconds)
        return None

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` if any limit is reached. Call before spending more."""
        err = self.exhausted()
        if err is not None:
            raise err

    def remaining_tokens(self) -> int | None:
        return None if self.budget.tokens is None else max(0, self.budget.tokens - self.tokens)
