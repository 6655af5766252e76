"""``sequential``: implement → review → revise, until the reviewer is satisfied and the public tests pass.

The author is the first agent still standing; the others take turns as reviewer, one per round
("five in a row": agent 1 reviews round 1, agent 2 round 2, ...). In a team of one the author's
model reviews in a reviewer role. The reviewer sees the code and its results on the public tests and
ends its answer with ``VERDICT: OK`` or ``VERDICT: ISSUES``. Stop rules, in order:

- ``done``: the reviewer says OK *and* every public test passes (a reviewer alone never ends it);
- ``stalled``: a revision repeats earlier code, or fails exactly the same public tests as before;
- ``rounds``: ``rounds`` reviews were made;
- ``budget``: the budget ran out (the skeleton catches BudgetExceeded).

The answer is the latest revision among those passing the most public tests.
"""

from __future__ import annotations

from pydantic import Field

from memdoor.agents.team import Agent
from memdoor.core.candidates import Candidate, Selection
from memdoor.strategies import messages
from memdoor.strategies.base import BaseStrategy, StrategyConfig, TeamRun


class SequentialConfig(StrategyConfig):
    """Options of ``sequential``."""

    rounds: int = Field(
        default=3, ge=0, description="Review rounds at most (one review + one revision each)."
    )


class Sequential(BaseStrategy):
    """One agent writes, another reviews, the writer revises."""

    name = "sequential"
    Config = SequentialConfig

    async def loop(self, run: TeamRun) -> None:
        cand = await self.first_draft(run)
        for r in range(1, self.config.rounds + 1):
            if cand is None:
                return
            roles = self.roles(run, r)
            if roles is None:
                return
            author, reviewer = roles
            verdict = await self.review(run, reviewer, cand, r)
            if verdict is None:  # the reviewer failed; the next round picks another
                continue
            ok, comments = verdict
            if ok and cand.public is not None and cand.public.passed:
                run.stopped = "done"
                return
            view = run.view_of(cand)
            msgs = messages.revise(view, cand.code, run.results(cand), comments)
            new = await run.attempt(author, msgs, role="revise", round=r, view=view)
            if new is None:
                continue
            if self.stalled(run, new, cand):
                run.stopped = "stalled"
                await run.ctx.event("stalled", author.id, round=r)
                return
            cand = new
        run.stopped = "rounds"

    async def first_draft(self, run: TeamRun) -> Candidate | None:
        """The first agent that answers writes the first draft."""
        for agent in run.active():
            cand = await run.draft(agent)
            if cand is not None:
                return cand
        return None

    @staticmethod
    def roles(run: TeamRun, r: int) -> tuple[Agent, Agent] | None:
        """(author, reviewer of round ``r``) among the agents still standing; None when none is left."""
        active = run.active()
        if not active:
            return None
        reviewers = active[1:] or active[:1]
        return active[0], reviewers[(r - 1) % len(reviewers)]

    async def review(self, run: TeamRun, reviewer: Agent, cand: Candidate, r: int) -> tuple[bool, str] | None:
        """(reviewer says OK, its comments), or None when the reviewer failed. No verdict line = issues."""
        msgs = messages.review(run.view_of(cand), cand.code, run.results(cand))
        completion = await run.ask(reviewer, msgs, role="review", round=r)
        if completion is None:
            return None
        ok = messages.parse_review(completion.text)
        entry = {"agent": reviewer.id, "round": r, "about": cand.agent, "ok": ok, "text": completion.text}
        await run.ctx.memory.append(run.ctx.task_id, "reviews", entry)
        await run.ctx.event("review", reviewer.id, round=r, about=cand.agent, ok=ok, text=completion.text)
        return ok is True, completion.text

    @staticmethod
    def stalled(run: TeamRun, new: Candidate, old: Candidate) -> bool:
        """Same code as any earlier candidate, or the same failing public tests as the last one."""
        earlier = {c.code.strip() for c in run.candidates[:-1]}
        if new.code.strip() in earlier:
            return True
        if new.public is None or old.public is None or new.public.passed or old.public.passed:
            return False
        return new.public.failing() == old.public.failing()

    async def choose(self, run: TeamRun) -> tuple[list[Candidate], Selection | None]:
        return run.candidates, None
