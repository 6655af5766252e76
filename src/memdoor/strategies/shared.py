"""``shared``: rounds over the team's shared memory.

Round 0: every agent writes a draft (memory kind ``drafts``, with its public-test results). Each later
round: every agent whose latest draft fails a public test reads the board — the latest draft of each
teammate, read back from memory — and writes a refined draft; an agent whose draft passes keeps it and
sits the round out (``refine="all"``: every agent refines). Ends after ``rounds`` refinements, or
earlier once every agent's latest draft passes the public tests. Then the selector chooses among each
agent's best draft.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from memdoor.agents.team import Agent
from memdoor.core.candidates import Candidate
from memdoor.strategies import messages
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun

Board = dict[str, dict[str, Any]]
"""Agent id → its latest draft entry in memory."""


class SharedConfig(StrategyConfig):
    """Options of ``shared``."""

    rounds: int = Field(default=2, ge=0, description="Refinement rounds after the first drafts.")
    peers: int = Field(
        default=4, ge=0, description="Teammates' drafts shown to an agent per round (passing ones first)."
    )
    stop_when_all_pass: bool = Field(
        default=True, description="Stop early once every agent's latest draft passes the public tests."
    )
    refine: Literal["failing", "all"] = Field(
        default="failing",
        description="Who refines in a round: agents whose latest draft fails a public test (a passing "
        "draft is kept, not rewritten), or every agent.",
    )


class Shared(BaseStrategy):
    """Draft, read the others' drafts and results from shared memory, refine; then select."""

    name = "shared"
    Config = SharedConfig

    async def loop(self, run: TeamRun) -> None:
        await run.together(run.active(), run.draft)
        for r in range(1, self.config.rounds + 1):
            board = await self.board(run)
            if not board:
                return
            if self.config.stop_when_all_pass and all(e["status"] == "passed" for e in board.values()):
                await run.ctx.event("converged", None, round=r)
                return
            await run.together(
                self.refiners(run, board), lambda a, r=r, board=board: self.refine(run, a, board, r)
            )

    def refiners(self, run: TeamRun, board: Board) -> list[Agent]:
        """The agents that refine this round (team order)."""
        if self.config.refine == "all":
            return run.active()
        return [a for a in run.active() if board.get(a.id, {}).get("status") != "passed"]

    @staticmethod
    async def board(run: TeamRun) -> Board:
        """The latest draft of every agent still standing, as written to shared memory."""
        standing = {a.id for a in run.active()}
        latest: Board = {}
        for entry in await run.ctx.memory.entries(run.ctx.task_id, "drafts"):
            if entry.get("agent") in standing:
                latest[entry["agent"]] = entry
        return latest

    async def refine(self, run: TeamRun, agent: Agent, board: Board, r: int) -> Candidate | None:
        own = board.get(agent.id)
        if own is None:  # no draft of its own yet (e.g. its first answer was lost): draft afresh
            return await run.draft(agent, r)
        others = [e for a, e in board.items() if a != agent.id]
        others.sort(key=lambda e: -int(e.get("passed", 0)))  # stable: team order among equals
        peers = [
            messages.Peer(e["agent"], e["code"], e["summary"], e.get("language") or run.problem.language)
            for e in others[: self.config.peers]
        ]
        msgs = messages.refine(run.view(agent), own["code"], own["results"], peers)
        return await run.attempt(agent, msgs, role="refine", round=r)
