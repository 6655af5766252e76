"""The cost ledger: every model call recorded, totals per problem, strategy and run."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from memdoor.core.messages import Usage

PriceFn = Callable[[str, "Usage"], "float | None"]
"""Dollars of one call of a model (its spec) with that usage; None when the model is unpriced."""


def unpriced(model: str, usage: Usage) -> float | None:
    """The price function that knows no prices (every call is unpriced)."""
    return None


class CallRecord(BaseModel):
    """One model call (successful or not)."""

    agent: str = Field(description="Id of the agent that made the call.")
    model: str = Field(description="Model spec used.")
    role: str = Field(default="", description="What the call was for: draft, review, repair, tests, ...")
    prompt_tokens: int = Field(default=0, description="Prompt tokens billed.")
    completion_tokens: int = Field(default=0, description="Completion tokens billed (all n completions).")
    n: int = Field(default=1, description="Completions requested.")
    latency_s: float = Field(default=0.0, description="Wall seconds of the call, retries included.")
    retries: int = Field(default=0, description="Retries made.")
    usd: float | None = Field(default=None, description="Dollars, from the price table; None when unpriced.")
    compute: float | None = Field(
        default=None, description="FLOPs ≈ 2 × parameters × tokens; None when the model's size is unknown."
    )
    ok: bool = Field(default=True, description="False when the call failed for good.")
    error: str | None = Field(default=None, description="Error type and message when the call failed.")

    @classmethod
    def failed(cls, *, agent: str, model: str, role: str, n: int, error: Exception) -> CallRecord:
        """A call that failed for good. Keeps the retries and seconds a backend set on the error."""
        return cls(
            agent=agent,
            model=model,
            role=role,
            n=n,
            ok=False,
            error=f"{type(error).__name__}: {error}",
            latency_s=float(getattr(error, "latency_s", 0.0) or 0.0),
            retries=int(getattr(error, "retries", 0) or 0),
        )


class LedgerTotals(BaseModel):
    """Sums over a ledger."""

    calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = Field(default=0.0, description="Sum of call latencies (overlapping calls add up).")
    wall_seconds: float = Field(default=0.0, description="Wall time of the run the ledger belongs to.")
    retries: int = 0
    usd: float | None = Field(default=None, description="Dollars; None if any call was unpriced.")
    compute: float | None = Field(
        default=None, description="FLOPs (≈ 2 × parameters × tokens); None if some model's size is unknown."
    )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Ledger(BaseModel):
    """An append-only list of call records, with the wall time of the run it covers."""

    calls: list[CallRecord] = Field(default_factory=list)
    wall_seconds: float = Field(default=0.0, description="Wall seconds of the run (set by whoever runs it).")

    def add(self, record: CallRecord) -> None:
        self.calls.append(record)

    def extend(self, other: Ledger) -> None:
        self.calls.extend(other.calls)

    @property
    def tokens(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)

    def totals(self) -> LedgerTotals:
        return totals_of(self.calls, self.wall_seconds)

    def totals_by(self, key: str) -> dict[str, LedgerTotals]:
        """Totals per value of a call field (``agent``, ``model`` or ``role``), in first-seen order.

        The groups' ``wall_seconds`` are 0: wall time belongs to the whole ledger, not to a group.
        """
        groups: dict[str, list[CallRecord]] = {}
        for c in self.calls:
            groups.setdefault(str(getattr(c, key)), []).append(c)
        return {k: totals_of(v) for k, v in groups.items()}


def merge_ledgers(ledgers: Iterable[Ledger]) -> Ledger:
    """One ledger holding every call of ``ledgers`` (e.g. all problems of a strategy in a run).

    Its ``wall_seconds`` is the sum of theirs: problem-seconds, which exceed the elapsed time of a run
    whose problems overlapped.
    """
    merged = Ledger()
    for ledger in ledgers:
        merged.extend(ledger)
        merged.wall_seconds += ledger.wall_seconds
    return merged


def sum_totals(parts: Iterable[LedgerTotals]) -> LedgerTotals:
    """Add up totals (per problem → per strategy → per run) exactly as :func:`totals_of` would on all calls.

    Dollars stay None ("unpriced") when any part that made calls is unpriced; parts without calls cost
    nothing. ``wall_seconds`` add up (problem-seconds).
    """
    t = LedgerTotals()
    usd: float | None = 0.0
    compute: float | None = 0.0
    for p in parts:
        t.calls += p.calls
        t.failed_calls += p.failed_calls
        t.prompt_tokens += p.prompt_tokens
        t.completion_tokens += p.completion_tokens
        t.model_seconds += p.model_seconds
        t.wall_seconds += p.wall_seconds
        t.retries += p.retries
        if p.calls:
            usd = None if usd is None or p.usd is None else usd + p.usd
            compute = None if compute is None or p.compute is None else compute + p.compute
    t.usd = usd if t.calls else None
    t.compute = compute if t.calls else None
    return t


def totals_of(calls: Iterable[CallRecord], wall_seconds: float = 0.0) -> LedgerTotals:
    """Sum call records. Dollars are None ("unpriced") as soon as one successful call has no price."""
    t = LedgerTotals(wall_seconds=wall_seconds)
    usd: float | None = 0.0
    compute: float | None = 0.0
    for c in calls:
        t.calls += 1
        t.failed_calls += not c.ok
        t.prompt_tokens += c.prompt_tokens
        t.completion_tokens += c.completion_tokens
        t.model_seconds += c.latency_s
        t.retries += c.retries
        if c.usd is None:
            if c.prompt_tokens or c.completion_tokens:
                usd = None
        elif usd is not None:
            usd += c.usd
        if c.compute is None:
            if c.prompt_tokens or c.completion_tokens:
                compute = None
        elif compute is not None:
            compute += c.compute
    t.usd = usd if t.calls else None
    t.compute = compute if t.calls else None
    return t
