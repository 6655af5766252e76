"""The team's calls during one strategy run: which agents are still in, and one budgeted, recorded call of
an agent (an agent whose endpoint fails for good drops out; calls in flight count against the call
budget). :class:`memdoor.strategies.base.TeamRun` hands these to the strategies (``run.ask``,
``run.active``)."""

from __future__ import annotations

from collections.abc import Sequence

from memdoor.agents.team import Agent, Team
from memdoor.core.errors import BudgetExceeded, ModelError
from memdoor.core.messages import Completion, Message
from memdoor.core.solution import AgentFailure
from memdoor.strategies.context import RunContext


class TeamCalls:
    """The calls of ``team``'s agents on one problem, and the agents that failed."""

    def __init__(self, team: Team, ctx: RunContext, *, logprobs: bool = True):
        self.team = team
        self.ctx = ctx
        self.logprobs = logprobs
        self.failures: list[AgentFailure] = []
        self._inflight = 0

    def active(self) -> list[Agent]:
        """Agents that have not failed, in team order."""
        out = {f.agent for f in self.failures}
        return [a for a in self.team.agents if a.id not in out]

    async def ask(
        self,
        agent: Agent,
        msgs: Sequence[Message],
        *,
        role: str,
        round: int,
        side: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion | None:
        """One call of ``agent``. A ModelError drops the agent from the team (recorded) and gives None; a
        ``side`` question (a referee's judgement after the drafts) gives None without dropping it (the
        failed call is still in the ledger and the trace). ``max_tokens`` and ``temperature`` override
        the agent's own.

        BudgetExceeded propagates: the strategy's loop ends and the skeleton keeps what was made.
        """
        if agent.id in {f.agent for f in self.failures}:
            return None
        self.reserve_call()
        self._inflight += 1
        try:
            resp = await agent.ask(
                msgs,
                self.ctx,
                role=role,
                logprobs=self.logprobs,
                seed_offset=round,
                max_tokens=max_tokens,
                temperature=temperature,
            )
        except ModelError as e:
            if not side:
                self.failures.append(AgentFailure(agent=agent.id, error=f"{type(e).__name__}: {e}"))
            return None
        finally:
            self._inflight -= 1
        return resp.completions[0] if resp.completions else Completion(text="")

    def reserve_call(self) -> None:
        """Count calls already in flight against the call budget, so a concurrent round cannot overshoot
        it. (Tokens are known only when a call returns: concurrent calls may overshoot a token budget.)"""
        b = self.ctx.budget
        limit = b.budget.calls
        if limit is not None and b.calls + self._inflight >= limit:
            raise BudgetExceeded("calls", b.calls + self._inflight, limit)
