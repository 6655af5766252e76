"""The cost ledger: every model call recorded, totals per problem, strategy and run."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field


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
    ok: bool = Field(default=True, description="False when the call failed for good.")
    error: str | None = Field(default=None, description="Error type and message when the call failed.")


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


def totals_of(calls: Iterable[CallRecord], wall_seconds: float = 0.0) -> LedgerTotals:
    """Sum call records. Dollars are None ("unpriced") as soon as one successful call has no price."""
    t = LedgerTotals(wall_seconds=wall_seconds)
    usd: float | None = 0.0
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
    t.usd = usd if t.calls else None
    return t
