"""``adaptive``: parallel attempts in waves, stopping as soon as enough of them agree and pass the public tests.

The first ``first`` agents draft at once; while no group of ``agree`` drafts behaves alike on the
public tests and passes them, the next ``wave`` agents draft, up to the whole team. Then the selector
chooses as in ``parallel``. A problem without public tests never stops early. Easy problems stop after the first wave; the budget goes to the problems
where the team disagrees. Agent i samples as in ``parallel`` (paired draws in a bench), so on a problem
where it never stops early, ``adaptive:N`` is ``parallel:N`` exactly.
"""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from memdoor.select.behaviour import behaviour_key
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun


class AdaptiveConfig(StrategyConfig):
    """Options of ``adaptive``."""

    first: int = Field(default=2, ge=1, description="Agents drafting in the first wave.")
    wave: int = Field(default=1, ge=1, description="Agents added in each later wave.")
    agree: int = Field(default=2, ge=1, description="Drafts that must behave alike and pass to stop early.")


class Adaptive(BaseStrategy):
    """Waves of parallel attempts until ``agree`` of them agree and pass the public tests."""

    name = "adaptive"
    Config = AdaptiveConfig

    async def loop(self, run: TeamRun) -> None:
        queue = list(run.team.agents)
        size = self.config.first
        while queue:
            wave, queue = queue[:size], queue[size:]
            await run.together([a for a in wave if a in run.active()], run.draft)
            size = self.config.wave
            agreeing = self.agreeing(run)
            if agreeing >= self.config.agree:
                await run.ctx.event("settled", None, drafts=len(run.candidates), agree=agreeing)
                return

    @staticmethod
    def agreeing(run: TeamRun) -> int:
        """The size of the largest group of drafts that pass the public tests and behave alike on them."""
        kinds = [t.kind for t in run.problem.public_tests]
        if not kinds:  # nothing to agree on: no early stop
            return 0
        groups: Counter = Counter()
        for c in run.candidates:
            if (
                c.code.strip()
                and c.public is not None
                and c.public.passed
                and len(c.public.tests) == len(kinds)
            ):
                groups[behaviour_key(c.public.tests, kinds)] += 1
        return max(groups.values(), default=0)
