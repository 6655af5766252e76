"""A referee made of a team's agent: asked which of two outputs is right for one input (S*'s judged
comparison, :class:`memdoor.core.protocols.Referee`). The call is the agent's like any other: budgeted,
recorded in the ledger, trace and memory (kind ``duels``). A spent budget or a failed agent means
"cannot tell", so selection still ends with an answer (and the agent stays in the team).

With ``both_orders`` the question is asked again with the outputs swapped, and only an answer that names
the same output both times counts: a small model that always answers "A" (the 0.5B did, on every
question of the HumanEval runs) then cannot tell, instead of always confirming the vote's leader."""

from __future__ import annotations

from collections.abc import Sequence

from memdoor.agents.team import Agent
from memdoor.core.errors import BudgetExceeded
from memdoor.core.problem import Problem, TestCase
from memdoor.strategies import messages
from memdoor.strategies.base import TeamRun


class AgentReferee:
    """``agent`` of ``run`` referees; each question is one call in round ``round``."""

    def __init__(
        self,
        run: TeamRun,
        agent: Agent,
        round: int,
        *,
        both_orders: bool = False,
        max_tokens: int | None = None,
    ):
        self.run = run
        self.agent = agent
        self.round = round
        self.both_orders = both_orders
        self.max_tokens = max_tokens

    async def which(self, problem: Problem, test: TestCase, outputs: Sequence[str]) -> int | None:
        first = await self.ask(problem, test, outputs)
        if not self.both_orders or first is None or len(outputs) != 2:
            return first
        swapped = await self.ask(problem, test, [outputs[1], outputs[0]])
        return first if swapped is not None and 1 - swapped == first else None

    async def ask(self, problem: Problem, test: TestCase, outputs: Sequence[str]) -> int | None:
        """One question: the index in ``outputs`` the agent finds right, or None; an answer is recorded in
        memory (kind ``duels``) and the trace."""
        try:
            completion = await self.run.ask(
                self.agent,
                messages.referee(problem, test, outputs),
                role="referee",
                round=self.round,
                side=True,
                max_tokens=self.max_tokens,
            )
        except BudgetExceeded:
            return None
        if completion is None:
            return None
        winner = messages.parse_referee(completion.text, outputs)
        entry = {"agent": self.agent.id, "input": test.input, "outputs": list(outputs), "winner": winner}
        await self.run.ctx.memory.append(self.run.ctx.task_id, "duels", entry)
        await self.run.ctx.event("referee", self.agent.id, winner=winner, text=completion.text)
        return winner
