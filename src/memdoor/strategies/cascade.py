"""``cascade``: the cheap agents first; the strong agents only when the cheap team is unsure.

The ``strong`` agents of the biggest models are the escalation (``cascade:5@BIG*1+SMALL*4``, or
``cascade:2@SMALL*1+BIG*1`` where the cheap agent 0 drafts exactly what ``single`` of SMALL drafts); when a
model's size is unknown, or every agent has the same, the first ``strong`` agents are. The others draft at once and the selector votes on their drafts. The team answers without escalating
when a group of at least ``agree`` cheap agents (default: a majority of them) behaves alike and passes
the public tests. Otherwise the strong agents draft too, and the answer is chosen among the strong
drafts that pass the public tests (the bigger model is trusted over a split small team), or, when none
does, by the selector over every draft. The point: the bigger model's accuracy at a fraction of its
cost, since most problems never reach it.

Agents sample as in every other strategy (the k-th agent of a model with that model's k-th temperature,
seed and prompt variant), so the strong agent's draft is exactly what ``single`` of the bigger model
drafts, and in a bench the cascade's calls are the very drafts the ``parallel`` and ``single`` rows made
(paired draws).
"""

from __future__ import annotations

from pydantic import Field

from memdoor.agents.team import Agent
from memdoor.core.candidates import Candidate, Selection
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun


class CascadeConfig(StrategyConfig):
    """Options of ``cascade``."""

    strong: int = Field(
        default=1,
        ge=1,
        description="How many agents are the escalation: those of the biggest models (the first N when "
        "sizes are unknown or equal).",
    )
    agree: int | None = Field(
        default=None,
        ge=1,
        description="Cheap agents that must agree (and pass the public tests) to answer without escalating; "
        "None: a strict majority of the cheap agents (3 of 4, 2 of 3).",
    )


class Cascade(BaseStrategy):
    """Cheap drafts and a vote; the strong agents draft only when the vote is not a confident majority."""

    name = "cascade"
    Config = CascadeConfig

    async def loop(self, run: TeamRun) -> None:
        strong, cheap = self.split(run)
        if not cheap:  # a team of strong agents only: they draft, the selector chooses
            await run.together(strong, run.draft)
            return
        await run.together(cheap, run.draft)
        pool = [c for c in run.candidates if c.agent in {a.id for a in cheap}]
        _, sel = await run.select(pool)
        need = self.config.agree or len(cheap) // 2 + 1
        tested = bool(run.problem.public_tests)
        if sel is not None and sel.index is not None and self.confident(sel, pool, need, tested):
            await run.ctx.event("cascade", None, escalated=False, agree=self.agreeing(sel), need=need)
            return
        await run.ctx.event("cascade", None, escalated=True, agree=self.agreeing(sel), need=need)
        await run.together([a for a in strong if a in run.active()], run.draft)

    def split(self, run: TeamRun) -> tuple[list[Agent], list[Agent]]:
        """(strong agents, cheap agents still standing): the ``strong`` agents with the most parameters
        (team order among equals), or the first ones when some agent's size is unknown."""
        strong = run.team.strongest(self.config.strong)
        active = run.active()
        return strong, [a for a in run.team.agents if a not in strong and a in active]

    @staticmethod
    def agreeing(sel: Selection | None) -> int:
        return 0 if sel is None else sel.agreeing()

    def confident(self, sel: Selection, pool: list[Candidate], need: int, tested: bool) -> bool:
        """A group of ``need`` cheap drafts agreeing and passing the public tests; never without public
        tests (``tested`` False: every draft then looks alike, nothing was checked)."""
        if not tested:
            return False
        chosen = pool[sel.index] if sel.index is not None else None
        passes = chosen is not None and chosen.public is not None and chosen.public.passed
        return passes and sel.reason != "no-survivor" and self.agreeing(sel) >= need

    async def choose(self, run: TeamRun) -> tuple[list[Candidate], Selection | None]:
        strong_ids = {a.id for a in self.split(run)[0]}
        drafts = run.best_per_agent()
        strong = [c for c in drafts if c.agent in strong_ids and c.public is not None and c.public.passed]
        escalated = any(c.agent in strong_ids for c in drafts)
        if not escalated:
            cheap = [c for c in drafts if c.agent not in strong_ids] or drafts
            return await run.select(cheap)
        return await run.select(strong or drafts)
