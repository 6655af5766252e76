"""``single`` and ``parallel`` with scripted agents and the real sandbox."""

from __future__ import annotations

from strategy_helpers import (
    BAD,
    BAD2,
    GOOD,
    GOOD2,
    OVERFIT,
    Barrier,
    add_problem,
    fenced,
    make_ctx,
    scripted,
    team_of,
)

from memdoor.core.errors import ModelUnavailable
from memdoor.strategies import messages
from memdoor.strategies.parallel import Parallel
from memdoor.strategies.single import Single

PROBLEM = add_problem().public_view()


async def test_single_is_one_attempt_by_agent_zero_with_the_official_prompt(sandbox):
    first, second = scripted({"draft": [fenced(GOOD)]}), scripted({"draft": [fenced(BAD)]}, spec="scripted:b")
    ctx = make_ctx(sandbox)
    sol = await Single().solve(PROBLEM, team_of(first, second), ctx)
    assert len(first.calls) == 1 and second.calls == []
    assert first.calls[0] == messages.draft(PROBLEM, 0)
    assert sol.code == GOOD and sol.agent == "agent0" and sol.stopped == "done"
    assert sol.public_verdict is not None and sol.public_verdict.passed
    assert sol.strategy == "single" and sol.selection is None and len(sol.candidates) == 1
    assert sol.ledger.totals().calls == 1 and sol.trace_id == ctx.trace.id
    drafts = await ctx.memory.entries(ctx.task_id, "drafts")
    assert [(d["agent"], d["code"], d["status"]) for d in drafts] == [("agent0", GOOD, "passed")]


async def test_single_without_a_code_block_fails_cleanly(sandbox):
    sol = await Single().solve(PROBLEM, team_of(scripted({"draft": ["I cannot do it."]})), make_ctx(sandbox))
    assert sol.code == "" and sol.public_verdict is not None and not sol.public_verdict.passed


async def test_parallel_attempts_run_concurrently_and_the_majority_wins(sandbox):
    answers = [fenced(BAD), fenced(GOOD), fenced(GOOD2), fenced(OVERFIT), fenced(GOOD)]
    model = Barrier(5, lambda k: answers[k])  # every call waits until all five are in flight
    ctx = make_ctx(sandbox)
    sol = await Parallel().solve(PROBLEM, team_of(*[model] * 5), ctx)
    assert model.most_in_flight == 5
    assert len(sol.candidates) == 5 and sol.strategy == "parallel:5"
    # the four survivors (GOOD twice, GOOD2, OVERFIT) agree on the public tests: 4 of 5 is a majority
    assert sol.selection is not None and sol.selection.rule == "majority"
    assert sol.code in (GOOD, GOOD2, OVERFIT) and sol.public_verdict.passed
    assert 0 < sol.confidence <= 1
    votes = await ctx.memory.entries(ctx.task_id, "votes")
    assert len(votes) == 1


async def test_parallel_agents_sample_differently(sandbox):
    seen = []

    class Recording:
        spec = "rec"

        async def complete(self, messages_, **kw):
            seen.append((kw["temperature"], kw["seed"], messages_[1]["content"]))
            return await scripted({"draft": [fenced(GOOD)]}).complete(messages_, **kw)

        async def aclose(self):
            return None

    await Parallel().solve(PROBLEM, team_of(*[Recording()] * 3), make_ctx(sandbox))
    temps, seeds, prompts = zip(*seen, strict=True)
    assert len(set(temps)) == 3 and len(set(seeds)) == 3 and len(set(prompts)) == 3


async def test_parallel_with_no_survivor_answers_with_the_best_failing_candidate(sandbox):
    a = scripted({"draft": [fenced(BAD)]})  # passes no public test
    b = scripted({"draft": [fenced(BAD2)]}, spec="scripted:b")  # passes (2, 2) -> 4
    sol = await Parallel().solve(PROBLEM, team_of(a, b), make_ctx(sandbox))
    assert sol.selection.reason == "no-survivor" and sol.code == BAD2 and sol.agent == "agent1"


async def test_parallel_survives_a_failing_agent_and_says_so(sandbox):
    dead = scripted({"draft": [ModelUnavailable("endpoint down")]}, spec="scripted:dead")
    a, b = scripted({"draft": [fenced(GOOD)]}), scripted({"draft": [fenced(BAD2)]}, spec="scripted:b")
    ctx = make_ctx(sandbox)
    sol = await Parallel().solve(PROBLEM, team_of(a, dead, b), ctx)
    assert [f.agent for f in sol.failures] == ["agent1"] and "ModelUnavailable" in sol.failures[0].error
    assert sol.code == GOOD and len(sol.candidates) == 2 and sol.stopped == "done"
    failed_calls = [c for c in sol.ledger.calls if not c.ok]
    assert [c.agent for c in failed_calls] == ["agent1"]


async def test_parallel_when_every_agent_fails(sandbox):
    dead = [scripted({"draft": [ModelUnavailable("down")]}, spec=f"scripted:{i}") for i in range(2)]
    sol = await Parallel().solve(PROBLEM, team_of(*dead), make_ctx(sandbox))
    assert sol.code == "" and sol.agent is None and sol.stopped == "failed" and len(sol.failures) == 2


async def test_mixed_team_uses_each_agents_own_model(sandbox):
    small = scripted({"draft": [fenced(BAD)]}, spec="scripted:small")
    big = scripted({"draft": [fenced(GOOD)]}, spec="scripted:big")
    sol = await Parallel().solve(PROBLEM, team_of(small, big, small, big), make_ctx(sandbox))
    assert len(small.calls) == 2 and len(big.calls) == 2
    assert sol.agents == [
        "agent0=scripted:small",
        "agent1=scripted:big",
        "agent2=scripted:small",
        "agent3=scripted:big",
    ]
    assert {c.model for c in sol.ledger.calls} == {"scripted:small", "scripted:big"}
    assert sol.code == GOOD and sol.agent in ("agent1", "agent3")


async def test_the_strategy_records_the_selectors_vote_in_memory_and_the_timeline(sandbox):
    """The selector only decides; the team's run writes its vote (memory kind votes, a vote event)."""
    from memdoor.core.candidates import Candidate
    from memdoor.strategies.base import TeamRun

    ctx = make_ctx(sandbox)
    run = TeamRun(PROBLEM, team_of(scripted({}), scripted({}, spec="scripted:b")), ctx)
    pool = [Candidate(code=GOOD, agent="a0", mean_logprob=-1.0), Candidate(code=BAD, agent="a1")]
    pool.append(Candidate(code=GOOD2, agent="a2", mean_logprob=-0.7))
    _, sel = await run.select(pool)
    (vote,) = await ctx.memory.entries(ctx.task_id, "votes")
    assert vote["index"] == sel.index == 2 and vote["agent"] == "a2" and vote["reason"] == "majority"
    assert [c["survived"] for c in vote["candidates"]] == [True, False, True]
    assert [c["group"] for c in vote["candidates"]] == [0, None, 0]
    assert "public_verdict" not in vote and vote["extra_inputs"] == 0
    timeline = await ctx.memory.entries(ctx.task_id, "timeline")
    assert [e["kind"] for e in timeline] == ["vote"]
    assert timeline[0]["data"]["chosen_agent"] == "a2"
    assert [e.kind for e in ctx.trace.events] == ["vote"]
