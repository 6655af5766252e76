"""Voting: the context's selector choosing among a pool of candidates, the test inputs an agent writes to
tell them apart when the problem has no public tests, and the record of the vote (memory kind ``votes``, a
``vote`` event). :class:`memdoor.strategies.base.TeamRun` calls these; strategies reach them through it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from memdoor.agents.team import Agent
from memdoor.core.candidates import Candidate, DuelWhen, Selection
from memdoor.core.messages import Completion, Message
from memdoor.core.problem import Problem, TestCase
from memdoor.core.protocols import Referee
from memdoor.strategies import messages
from memdoor.strategies.context import RunContext
from memdoor.strategies.testgen import record_inputs

INPUTS_ROUND = 3
"""The round (seed offset) of an inputs call: one for every strategy, so in a bench the rows asking the
same agent for inputs on a problem share one call (``hybrid``'s, after its two repair rounds)."""


class Ask(Protocol):
    """One budgeted, recorded call of an agent (:meth:`memdoor.strategies.base.TeamRun.ask`); None when
    the agent failed."""

    async def __call__(
        self, agent: Agent, msgs: Sequence[Message], *, role: str, round: int
    ) -> Completion | None: ...


def wants_inputs(problem: Problem, pool: Sequence[Candidate], count: int, asked: bool) -> bool:
    """Whether inputs are written before a vote: ``count`` asked for, the problem has no public tests,
    none were asked for yet, and the pool holds more than one program."""
    programs = {c.code.strip() for c in pool if c.code.strip()}
    return bool(count) and not problem.public_tests and not asked and len(programs) > 1


async def write_inputs(
    ask: Ask, agents: Sequence[Agent], problem: Problem, ctx: RunContext, count: int, *, round: int
) -> list[TestCase] | None:
    """The first of ``agents`` that answers writes up to ``count`` test inputs (stored in memory kind
    ``tests``); None when none answered."""
    for agent in agents:
        completion = await ask(agent, messages.inputs(problem, count), role="inputs", round=round)
        if completion is None:
            continue
        inputs = messages.parse_inputs(completion.text, problem, limit=count)
        await record_inputs(ctx, agent.id, inputs)
        return inputs
    return None


async def vote(
    ctx: RunContext,
    problem: Problem,
    pool: Sequence[Candidate],
    extra_inputs: Sequence[TestCase],
    *,
    referee: Referee | None,
    duel: DuelWhen,
) -> Selection:
    """The context's selector chooses among ``pool`` (running candidates on the public tests and
    ``extra_inputs``), and its decision is recorded."""
    selection = await ctx.selector.select(
        problem, pool, ctx.judge, extra_inputs=extra_inputs, referee=referee, duel=duel
    )
    await record_vote(ctx, selection, pool, extra_inputs=len(extra_inputs))
    return selection


async def record_vote(
    ctx: RunContext, selection: Selection, pool: Sequence[Candidate], *, extra_inputs: int
) -> None:
    """The selector's decision, in memory (kind ``votes``) and in the trace (a ``vote`` event)."""
    group_of = {i: gi for gi, g in enumerate(selection.groups) for i in g}
    chosen_agent = pool[selection.index].agent if selection.index is not None else None
    entry: dict[str, Any] = {
        **selection.model_dump(exclude={"public_verdict"}),
        "agent": chosen_agent,
        "extra_inputs": extra_inputs,
        "candidates": [
            {
                "agent": c.agent,
                "round": c.round,
                "mean_logprob": c.mean_logprob,
                "survived": i in selection.survivors,
                "group": group_of.get(i),
            }
            for i, c in enumerate(pool)
        ],
    }
    await ctx.memory.append(ctx.task_id, "votes", entry)
    await ctx.event(
        "vote",
        None,
        index=selection.index,
        chosen_agent=chosen_agent,
        reason=selection.reason,
        rule=selection.rule,
        confidence=round(selection.confidence, 4),
        groups=selection.groups,
        votes=selection.votes,
        survivors=selection.survivors,
    )
