"""Drafts: what a team's answer becomes once tested (a :class:`Candidate`), how it is recorded (memory kinds
``drafts`` and ``verdicts``, a trace event), which draft of each agent is its best, and running the agents'
work together. :class:`memdoor.strategies.base.TeamRun` calls these; strategies reach them through it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

from memdoor.core.candidates import Candidate
from memdoor.core.errors import BudgetExceeded
from memdoor.core.problem import Problem
from memdoor.core.verdict import Verdict
from memdoor.strategies import messages
from memdoor.strategies.context import RunContext

T = TypeVar("T")
X = TypeVar("X")


def public_rank(c: Candidate) -> int:
    """How many public tests a candidate passes (-1 when it was never run)."""
    return -1 if c.public is None else c.public.tests_passed


def best_per_agent(candidates: Iterable[Candidate], order: Sequence[str]) -> list[Candidate]:
    """Each agent's candidate passing the most public tests (the latest among equals), in ``order`` (agent
    ids; others last)."""
    best: dict[str, Candidate] = {}
    for c in candidates:
        if c.agent not in best or public_rank(c) >= public_rank(best[c.agent]):
            best[c.agent] = c
    rank = {a: i for i, a in enumerate(order)}
    return sorted(best.values(), key=lambda c: rank.get(c.agent, len(rank)))


async def record_draft(
    ctx: RunContext,
    cand: Candidate,
    verdict: Verdict,
    *,
    problem: Problem,
    view: Problem,
    role: str,
    by: str | None,
) -> None:
    """``cand`` and its public ``verdict`` in memory (kinds ``drafts``, with its code, its language (``view``'s)
    and what an agent is told of its results, and ``verdicts``) and in the trace (a ``role`` event). ``by``
    is the agent that wrote it when it continues another agent's line of work."""
    written_by = {"by": by} if by is not None else {}
    outcome = {
        "status": verdict.status,
        "passed": verdict.tests_passed,
        "total": verdict.tests_total,
        "summary": messages.summary(verdict),
    }
    await ctx.memory.append(
        ctx.task_id,
        "drafts",
        {
            "agent": cand.agent,
            **written_by,
            "round": cand.round,
            "role": role,
            "code": cand.code,
            "language": view.language,
            "results": messages.results(problem.public_tests, verdict, code=cand.code),
            **outcome,
        },
    )
    await ctx.memory.append(
        ctx.task_id, "verdicts", {"agent": cand.agent, **written_by, "round": cand.round, **outcome}
    )
    await ctx.event(role, cand.agent, round=cand.round, code=cand.code, **written_by, **outcome)


async def together(items: Iterable[X], fn: Callable[[X], Awaitable[T]]) -> list[T | None]:
    """Run ``fn`` on every item concurrently and wait for all of them (so every candidate made is kept).

    Results are in input order. If any raised BudgetExceeded, it is re-raised after all finished.
    """
    results = await asyncio.gather(*(fn(x) for x in items), return_exceptions=True)
    out: list[T | None] = []
    spent: BudgetExceeded | None = None
    for r in results:
        if isinstance(r, BudgetExceeded):
            spent = spent or r
            out.append(None)
        elif isinstance(r, BaseException):
            raise r
        else:
            out.append(r)
    if spent is not None:
        raise spent
    return out
