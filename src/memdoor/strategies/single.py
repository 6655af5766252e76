"""``single``: agent 0, one attempt, LiveCodeBench's prompt. The baseline every team is measured against."""

from __future__ import annotations

from memdoor.core.candidates import Candidate, Selection
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun


class SingleConfig(StrategyConfig):
    """``single`` has no options of its own."""


class Single(BaseStrategy):
    """One attempt by the team's first agent; no selection, no repair."""

    name = "single"
    Config = SingleConfig

    async def loop(self, run: TeamRun) -> None:
        await run.draft(run.team[0])

    async def choose(self, run: TeamRun) -> tuple[list[Candidate], Selection | None]:
        return run.candidates, None
