"""``parallel``: every agent attempts at once (own temperature, seed, prompt variant, maybe own model);
the selector chooses. Concurrent requests to one engine batch, so a round costs about one attempt's time."""

from __future__ import annotations

from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun


class ParallelConfig(StrategyConfig):
    """``parallel`` has no options of its own: diversity comes from the team's agent configs."""


class Parallel(BaseStrategy):
    """N independent attempts made concurrently, then selection over them."""

    name = "parallel"
    Config = ParallelConfig

    async def loop(self, run: TeamRun) -> None:
        await run.together(run.active(), run.draft)
