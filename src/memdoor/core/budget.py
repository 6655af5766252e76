"""Budgets: tokens, calls and wall seconds per problem, so strategies can be compared at equal cost."""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from memdoor.core.errors import BudgetExceeded

MIN_COMPLETION = 16  # a call that could not write even this many tokens is not worth making


class Budget(BaseModel):
    """Limits for one problem. None means unlimited."""

    tokens: int | None = Field(default=None, description="Prompt + completion tokens over all calls.")
    calls: int | None = Field(
        default=None, description="Model calls (a call with n completions counts once)."
    )
    seconds: float | None = Field(default=None, description="Wall seconds from the start of the strategy.")
    compute: float | None = Field(
        default=None,
        description="FLOPs over all calls (≈ 2 × parameters × tokens), so teams of different model sizes "
        "can be given equal work.",
    )


class BudgetTracker:
    """Tracks spending against a :class:`Budget`. Not shared between problems."""

    def __init__(self, budget: Budget | None = None, clock=time.monotonic):
        self.budget = budget or Budget()
        self._clock = clock
        self.started = clock()
        self.tokens = 0
        self.calls = 0
        self.reserved = 0  # tokens held by calls in flight (see reserve)
        self.compute = 0.0
        self.reserved_compute = 0.0  # FLOPs held by calls in flight

    @property
    def seconds(self) -> float:
        return self._clock() - self.started

    def charge(self, tokens: int, calls: int = 1, compute: float = 0.0) -> None:
        """Record what a call spent (always recorded, even past the limit)."""
        self.tokens += tokens
        self.calls += calls
        self.compute += compute

    def exhausted(self) -> BudgetExceeded | None:
        """The first limit reached, as an error value, or None."""
        b = self.budget
        if b.tokens is not None and self.tokens >= b.tokens:
            return BudgetExceeded("tokens", self.tokens, b.tokens)
        if b.calls is not None and self.calls >= b.calls:
            return BudgetExceeded("calls", self.calls, b.calls)
        if b.compute is not None and self.compute >= b.compute:
            return BudgetExceeded("compute", self.compute, b.compute)
        if b.seconds is not None and self.seconds >= b.seconds:
            return BudgetExceeded("seconds", round(self.seconds, 3), b.seconds)
        return None

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` if any limit is reached. Call before spending more."""
        err = self.exhausted()
        if err is not None:
            raise err

    def reserve(
        self, prompt_estimate: int, max_tokens: int, n: int = 1, flops_per_token: float | None = None
    ) -> tuple[int, int]:
        """Hold room for one call so that concurrent calls cannot overshoot the token budget together.

        Returns ``(completion cap, tokens held)``: the cap is ``max_tokens`` or less, so that this call's
        estimated prompt and ``n`` completions fit in what is left after the calls in flight. Raises
        :class:`BudgetExceeded` when fewer than ``MIN_COMPLETION`` tokens per completion would fit.
        Give the held tokens back with :meth:`release` when the call ends (its real cost is charged).

        With a compute budget and the model's ``flops_per_token`` (2 × parameters), the cap also keeps
        the call within the compute left, the same way."""
        cap = max_tokens
        if self.budget.tokens is not None:
            free = self.budget.tokens - self.tokens - self.reserved - prompt_estimate
            cap = min(cap, free // max(1, n))
            if cap < MIN_COMPLETION:
                raise BudgetExceeded("tokens", self.tokens + self.reserved, self.budget.tokens)
        if self.budget.compute is not None and flops_per_token:
            left = self.budget.compute - self.compute - self.reserved_compute
            cap = min(cap, int(left / flops_per_token - prompt_estimate) // max(1, n))
            if cap < MIN_COMPLETION:
                raise BudgetExceeded("compute", self.compute + self.reserved_compute, self.budget.compute)
        limited_compute = self.budget.compute is not None and bool(flops_per_token)
        if self.budget.tokens is None and not limited_compute:
            return cap, 0
        held = prompt_estimate + cap * max(1, n)
        if self.budget.tokens is not None:
            self.reserved += held
        if limited_compute:
            self.reserved_compute += held * (flops_per_token or 0.0)
        return cap, held

    def release(self, held: int, flops_per_token: float | None = None) -> None:
        if self.budget.tokens is not None:
            self.reserved -= held
        if self.budget.compute is not None and flops_per_token:
            self.reserved_compute -= held * flops_per_token
