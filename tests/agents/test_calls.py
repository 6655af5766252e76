"""An agent's call needs only a CallContext (budget, ledger, trace, price, events): no judge, no selector."""

import pytest

from memdoor.agents.calls import CallContext
from memdoor.agents.team import Agent, AgentConfig
from memdoor.core.budget import Budget, BudgetTracker
from memdoor.core.errors import BudgetExceeded
from memdoor.memory.inproc import InProcMemory
from memdoor.models.scripted import ScriptedModel


async def test_a_call_is_budgeted_and_recorded_in_a_plain_call_context():
    memory, seen = InProcMemory(), []
    ctx = CallContext(memory=memory, budget=BudgetTracker(Budget(calls=1)), on_event=seen.append)
    agent = Agent(AgentConfig(id="a0", model="scripted"), ScriptedModel(["def f(): return 1"]))
    resp = await agent.ask([{"role": "user", "content": "write f"}], ctx, role="draft")
    assert resp.completions[0].text == "def f(): return 1"
    assert [(c.agent, c.role) for c in ctx.ledger.calls] == [("a0", "draft")]
    assert [e.kind for e in ctx.trace.events] == ["call", "answer"] == [e.kind for e in seen]
    timeline = await memory.entries(ctx.task_id, "timeline")
    assert [e["kind"] for e in timeline] == ["call", "answer"]
    with pytest.raises(BudgetExceeded):  # the second call is over the budget of one
        await agent.ask([{"role": "user", "content": "again"}], ctx, role="draft")


async def test_without_memory_the_events_stay_in_the_trace():
    ctx = CallContext()
    agent = Agent(AgentConfig(id="a0", model="scripted"), ScriptedModel(["x = 1"]))
    await agent.ask([{"role": "user", "content": "hi"}], ctx, role="review")
    assert [e.kind for e in ctx.trace.events] == ["call", "answer"]
    assert ctx.ledger.calls[0].role == "review"
