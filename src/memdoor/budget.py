"""Budgets: tokens, calls and wall seconds per problem, so strategies can be compared at equal cost."""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from memdoor.errors import BudgetExceeded

MIN_COMPLETION = 16  # a call that could not write even this many tokens is not worth making


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
        self.reserved = 0  # tokens held by calls in flight (see reserve)

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

    def reserve(self, prompt_estimate: int, max_tokens: int, n: int = 1) -> tuple[int, int]:
        """Hold room for one call so that concurrent calls cannot overshoot the token budget together.

        Returns ``(completion cap, tokens held)``: the cap is ``max_tokens`` or less, so that this call's
        estimated prompt and ``n`` completions fit in what is left after the calls in flight. Raises
        :class:`BudgetExceeded` when fewer than ``MIN_COMPLETION`` tokens per completion would fit.
        Give the held tokens back with :meth:`release` when the call ends (its real cost is charged)."""
        if self.budget.tokens is None:
            return max_tokens, 0
        free = self.budget.tokens - self.tokens - self.reserved - prompt_estimate
        cap = min(max_tokens, free // max(1, n))
        if cap < MIN_COMPLETION:
            raise BudgetExceeded("tokens", self.tokens + self.reserved, self.budget.tokens)
        held = prompt_estimate + cap * max(1, n)
        self.reserved += held
        return cap, held

    def release(self, held: int) -> None:
        self.reserved -= held
