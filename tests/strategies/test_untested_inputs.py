"""A problem without public tests: before selecting, the first agent writes inputs, so the vote groups the
candidates by what they do on them instead of seeing one group and taking the most confident draft."""

from __future__ import annotations

import pytest
from strategy_helpers import GOOD, GOOD2, OVERFIT, add_problem, fenced, make_ctx, scripted, team_of

from memdoor.core.budget import Budget
from memdoor.strategies.cascade import Cascade
from memdoor.strategies.hybrid import Hybrid
from memdoor.strategies.parallel import Parallel
from memdoor.strategies.single import Single

UNTESTED = add_problem().public_view().model_copy(update={"public_tests": []})
CALLS = "```python\nprint(add(0, 5))\nx = 7\nassert add(x, 7) == 14\n```\n"


def team():
    """Two agents agree on GOOD's behaviour (two programs); a third, the most confident, writes OVERFIT."""
    return team_of(
        scripted({"draft": [fenced(GOOD)], "inputs": [CALLS]}, logprob=-0.5),
        scripted({"draft": [fenced(GOOD2)]}, spec="scripted:g2", logprob=-0.5),
        scripted({"draft": [fenced(OVERFIT)]}, spec="scripted:o", logprob=-0.01),
    )


async def test_inputs_written_before_the_vote_split_the_candidates(sandbox):
    ctx = make_ctx(sandbox)
    sol = await Parallel().solve(UNTESTED, team(), ctx)
    assert [c.role for c in sol.ledger.calls] == ["draft", "draft", "draft", "inputs"]
    assert await ctx.memory.entries(ctx.task_id, "tests") == [{"agent": "agent0", "inputs": ["0\n5", "7\n7"]}]
    assert sol.selection.groups == [[0, 1], [2]] and sol.selection.rule == "majority"
    assert sol.code in (GOOD, GOOD2)


async def test_without_them_the_most_confident_draft_wins(sandbox):
    sol = await Parallel(untested_inputs=0).solve(UNTESTED, team(), make_ctx(sandbox))
    assert [c.role for c in sol.ledger.calls] == ["draft"] * 3
    assert sol.selection.groups == [[0, 1, 2]] and sol.code == OVERFIT


async def test_no_inputs_when_there_is_nothing_to_tell_apart(sandbox):
    one = scripted({"draft": [fenced(GOOD)], "inputs": [CALLS]})
    same = scripted({"draft": [fenced(GOOD)]}, spec="scripted:same")
    tested = await Parallel().solve(add_problem().public_view(), team(), make_ctx(sandbox))
    for sol in (
        await Parallel().solve(UNTESTED, team_of(one, same), make_ctx(sandbox)),  # one program
        await Single().solve(UNTESTED, team_of(one), make_ctx(sandbox)),
        tested,  # public tests to go by
    ):
        assert "inputs" not in [c.role for c in sol.ledger.calls]


@pytest.mark.parametrize("strategy", [Hybrid(), Cascade()])
async def test_inputs_are_asked_once_per_problem(strategy, sandbox):
    """hybrid writes its own (every draft passes zero public tests); cascade selects twice: one call."""
    sol = await strategy.solve(UNTESTED, team(), make_ctx(sandbox))
    assert [c.role for c in sol.ledger.calls].count("inputs") == 1


async def test_a_spent_budget_selects_without_inputs(sandbox):
    sol = await Parallel().solve(UNTESTED, team(), make_ctx(sandbox, budget=Budget(calls=3)))
    assert sol.stopped == "budget" and sol.code == OVERFIT
    assert [c.role for c in sol.ledger.calls] == ["draft"] * 3
