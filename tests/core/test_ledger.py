"""The cost ledger adds up per problem, strategy and run; unpriced stays unpriced; failed calls count."""

from __future__ import annotations

import pytest

from memdoor.agents.team import Agent, AgentConfig
from memdoor.core.errors import ModelError, RateLimited
from memdoor.core.ledger import CallRecord, Ledger, LedgerTotals, merge_ledgers, sum_totals, totals_of
from memdoor.judging.judge import Judge
from memdoor.memory.inproc import InProcMemory
from memdoor.models.prices import PriceTable
from memdoor.models.scripted import ScriptedModel
from memdoor.strategies.context import RunContext


def call(agent="a0", model="openai:gpt-4o-mini", *, p=100, c=50, usd=0.001, ok=True, retries=0, latency=1.0):
    return CallRecord(
        agent=agent,
        model=model,
        prompt_tokens=p,
        completion_tokens=c,
        usd=usd,
        ok=ok,
        retries=retries,
        latency_s=latency,
        error=None if ok else "ModelUnavailable: down",
    )


def test_totals_of_one_ledger():
    ledger = Ledger(
        calls=[
            call(p=100, c=50, usd=0.001, retries=2, latency=1.5),
            call(p=10, c=5, usd=0.0005, latency=0.5),
            CallRecord(agent="a1", model="openai:gpt-4o-mini", ok=False, error="RateLimited: x", retries=5),
        ],
        wall_seconds=3.0,
    )
    t = ledger.totals()
    assert (t.calls, t.failed_calls) == (3, 1)
    assert (t.prompt_tokens, t.completion_tokens, t.tokens) == (110, 55, 165)
    assert t.retries == 7
    assert t.model_seconds == pytest.approx(2.0)
    assert t.wall_seconds == 3.0
    assert t.usd == pytest.approx(0.0015)  # a failed call with no tokens does not make it unpriced
    assert ledger.tokens == 165


def test_one_unpriced_call_makes_the_total_unpriced():
    t = Ledger(calls=[call(usd=0.5), call(model="local:q", usd=None)]).totals()
    assert t.usd is None
    assert t.prompt_tokens == 200


def test_empty_ledger_is_unpriced_and_zero():
    t = Ledger().totals()
    assert t.calls == 0
    assert t.usd is None


def test_totals_by_agent_and_model():
    ledger = Ledger(
        calls=[call("a0", usd=1.0), call("a1", model="local:q", usd=None), call("a0", usd=2.0, ok=False)]
    )
    by_agent = ledger.totals_by("agent")
    assert list(by_agent) == ["a0", "a1"]
    assert by_agent["a0"].calls == 2
    assert by_agent["a0"].failed_calls == 1
    assert by_agent["a0"].usd == pytest.approx(3.0)
    assert by_agent["a1"].usd is None
    by_model = ledger.totals_by("model")
    assert by_model["openai:gpt-4o-mini"].prompt_tokens == 200
    assert by_model["local:q"].completion_tokens == 50


def problem_ledgers() -> dict[str, dict[str, Ledger]]:
    """run → strategy → problem ledgers: one strategy all priced, one with an unpriced model, one empty."""
    return {
        "single": {
            "p1": Ledger(calls=[call(usd=0.25)], wall_seconds=2.0),
            "p2": Ledger(
                calls=[call(usd=0.5, retries=1), call(ok=False, p=0, c=0, usd=None)], wall_seconds=3.0
            ),
        },
        "parallel": {
            "p1": Ledger(calls=[call(usd=0.25), call(model="local:q", usd=None)], wall_seconds=4.0),
            "p2": Ledger(calls=[call(usd=1.0)], wall_seconds=1.0),
        },
        "idle": {"p1": Ledger(wall_seconds=0.5)},
    }


def test_sums_per_problem_strategy_and_run_agree_with_a_flat_sum():
    runs = problem_ledgers()
    per_strategy = {s: sum_totals(led.totals() for led in ps.values()) for s, ps in runs.items()}
    run_total = sum_totals(per_strategy.values())
    every_call = [c for ps in runs.values() for led in ps.values() for c in led.calls]
    flat = totals_of(
        every_call, wall_seconds=sum(led.wall_seconds for ps in runs.values() for led in ps.values())
    )

    single = per_strategy["single"]
    assert (single.calls, single.failed_calls, single.retries) == (3, 1, 1)
    assert single.usd == pytest.approx(0.75)
    assert single.wall_seconds == 5.0
    assert per_strategy["parallel"].usd is None  # one unpriced call
    assert per_strategy["parallel"].prompt_tokens == 300
    assert per_strategy["idle"].calls == 0
    assert per_strategy["idle"].usd is None

    assert run_total.usd is None  # parallel's unpriced call reaches the run total
    for field in LedgerTotals.model_fields:
        assert getattr(run_total, field) == pytest.approx(getattr(flat, field)), field
    assert sum_totals([per_strategy["single"], per_strategy["idle"]]).usd == pytest.approx(0.75)


def test_merge_ledgers_keeps_every_call():
    runs = problem_ledgers()
    merged = merge_ledgers(runs["single"].values())
    assert len(merged.calls) == 3
    assert merged.wall_seconds == 5.0
    assert merged.totals() == sum_totals(led.totals() for led in runs["single"].values())
    assert merge_ledgers([]).totals().calls == 0


def test_sum_of_nothing():
    t = sum_totals([])
    assert t.calls == 0
    assert t.usd is None


def test_failed_record_keeps_what_the_backend_spent():
    err = RateLimited("openai:m: rate limited (HTTP 429); gave up after 4 attempts in 3.0 s")
    err.retries, err.latency_s = 3, 3.0
    rec = CallRecord.failed(agent="a0", model="openai:m", role="draft", n=2, error=err)
    assert not rec.ok
    assert rec.retries == 3
    assert rec.latency_s == 3.0
    assert rec.error.startswith("RateLimited: openai:m")
    assert rec.usd is None
    plain = CallRecord.failed(agent="a0", model="m", role="draft", n=1, error=ModelError("boom"))
    assert (plain.retries, plain.latency_s) == (0, 0.0)


class NoSandbox:
    name = "none"


async def test_agent_calls_land_in_the_ledger_with_prices():
    """An agent's successful and failed calls, priced by a user table, through the real RunContext."""
    down = RateLimited("scripted: rate limited (HTTP 429); gave up after 3 attempts in 2.5 s")
    down.retries, down.latency_s = 2, 2.5
    model = ScriptedModel(["def f():\n    return 1", down], spec="scripted")
    agent = Agent(AgentConfig(id="a0", model="scripted"), model)
    table = PriceTable({"scripted": {"input": 1_000_000.0, "output": 2_000_000.0}})  # $1 / $2 per token
    ctx = RunContext(judge=Judge(NoSandbox()), memory=InProcMemory(), selector=None, price=table.price)
    resp = await agent.ask([{"role": "user", "content": "write f please"}], ctx, role="draft")
    with pytest.raises(ModelError):
        await agent.ask([{"role": "user", "content": "again"}], ctx, role="repair")
    t = ctx.ledger.totals()
    assert (t.calls, t.failed_calls) == (2, 1)
    assert t.prompt_tokens == resp.usage.prompt_tokens == 3
    assert t.completion_tokens == resp.usage.completion_tokens == 4
    assert t.usd == pytest.approx(3 * 1 + 4 * 2)
    assert [c.role for c in ctx.ledger.calls] == ["draft", "repair"]
    failed = ctx.ledger.calls[1]
    assert (failed.ok, failed.retries, failed.latency_s) == (False, 2, 2.5)
    assert failed.error.startswith("RateLimited: ")
    assert t.retries == 2
