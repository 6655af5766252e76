"""What every strategy shares: its config base, the per-problem working state, and the solve skeleton.

A strategy class holds only its configuration. Everything that changes during one problem (candidates,
failed agents, the stop reason, agent-written inputs) lives in a :class:`TeamRun` made fresh by
:meth:`BaseStrategy.solve`, so one strategy object can solve many problems concurrently.

The skeleton: ``solve`` runs the strategy's ``loop`` hook, turns :class:`BudgetExceeded` into
``stopped="budget"`` (keeping every candidate made so far), then calls the ``choose`` hook and
returns a :class:`Solution`. Variants override ``loop`` and ``choose``; nothing else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from memdoor.agents.team import Agent, Team
from memdoor.core.candidates import Candidate, DuelWhen, Selection
from memdoor.core.errors import BudgetExceeded, ModelError, UsageError
from memdoor.core.messages import Completion, Message
from memdoor.core.problem import Problem, TestCase
from memdoor.core.protocols import Referee
from memdoor.core.solution import AgentFailure, Solution
from memdoor.core.verdict import Verdict
from memdoor.problems.languages import answer_in
from memdoor.strategies import messages
from memdoor.strategies.context import RunContext
from memdoor.strategies.testgen import record_inputs
from memdoor.text.extract import candidate_code

INPUTS_ROUND = 3
"""The round (seed offset) of an inputs call: one for every strategy, so in a bench the rows asking the
same agent for inputs on a problem share one call (``hybrid``'s, after its two repair rounds)."""

T = TypeVar("T")
X = TypeVar("X")


class StrategyConfig(BaseModel):
    """Options every strategy has. Subclasses add their own; unknown options are an error."""

    model_config = ConfigDict(extra="forbid")

    recorded_when_set: ClassVar[frozenset[str]] = frozenset()
    """Options added after results were committed: a run's settings record them only when set away from
    their default, so the runs made before them still resume (see :meth:`recorded`)."""

    logprobs: bool = Field(
        default=True, description="Ask models for token log-probabilities (the selector's confidence signal)."
    )
    untested_inputs: int = Field(
        default=5,
        ge=0,
        description="For a problem without public tests, when the candidates hold more than one program: "
        "test inputs the first agent writes before selection, so the selector groups candidates by what "
        "they do on them (0: none; every candidate then behaves alike and the most confident is chosen).",
    )

    def recorded(self) -> dict[str, Any]:
        """The options as a run's settings record them: every option, with defaults filled in, except those
        in ``recorded_when_set`` left at their default."""
        data = self.model_dump(mode="json")
        for name in self.recorded_when_set:
            if getattr(self, name) == type(self).model_fields[name].default:
                data.pop(name, None)
        return data


def public_rank(c: Candidate) -> int:
    """How many public tests a candidate passes (-1 when it was never run)."""
    return -1 if c.public is None else c.public.tests_passed


class TeamRun:
    """The working state of one strategy on one problem (the public view only)."""

    def __init__(
        self,
        problem: Problem,
        team: Team,
        ctx: RunContext,
        *,
        logprobs: bool = True,
        untested_inputs: int = 0,
    ):
        if problem.hidden_tests:
            raise UsageError(
                f"problem {problem.id}: strategies only get the public view (hidden tests present)"
            )
        self.problem = problem
        self.team = team
        self.ctx = ctx
        self.logprobs = logprobs
        self.untested_inputs = untested_inputs
        self.candidates: list[Candidate] = []
        self.failures: list[AgentFailure] = []
        self.extra_inputs: list[TestCase] = []
        self.inputs_asked = False
        self.stopped = "done"
        self._inflight = 0

    # -- the team -------------------------------------------------------------------------------

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

    async def together(self, items: Iterable[X], fn: Callable[[X], Awaitable[T]]) -> list[T | None]:
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

    # -- candidates -----------------------------------------------------------------------------

    def view(self, agent: Agent) -> Problem:
        """The problem as ``agent`` answers it: in its own language in a mixed-language team."""
        return answer_in(self.problem, agent.config.language)

    def view_of(self, c: Candidate) -> Problem:
        """The problem as ``c`` was written for it (its language)."""
        return answer_in(self.problem, c.language)

    async def test(self, code: str, problem: Problem | None = None) -> Verdict:
        """``code`` on the public tests (all of them, so agents see every failure), run in ``problem``'s
        language (default: the problem's own)."""
        if not self.problem.public_tests:
            return Verdict(status="passed", tests=[])
        return await self.ctx.judge.run_tests(problem or self.problem, code)  # no code: fails without running

    def results(self, c: Candidate) -> str:
        """What an agent is told about ``c`` on the public tests."""
        return messages.results(self.problem.public_tests, c.public, code=c.code)

    async def attempt(
        self,
        agent: Agent,
        msgs: Sequence[Message],
        *,
        role: str,
        round: int,
        view: Problem | None = None,
        chain: Agent | None = None,
        temperature: float | None = None,
    ) -> Candidate | None:
        """Ask ``agent`` for code, run it on the public tests, record it (candidates, memory, trace).
        ``view`` is the problem as the answer is written for (default: the agent's own; a revision keeps
        the language of the code it revises). ``chain`` is the agent whose line of work the answer
        continues when another agent wrote it (a stronger agent repairing a teammate's draft): the
        candidate is that agent's, and memory and trace say who wrote it (``by``). ``temperature``
        overrides the agent's own."""
        completion = await self.ask(agent, msgs, role=role, round=round, temperature=temperature)
        if completion is None:
            return None
        owner = chain or agent
        by = {"by": agent.id} if owner is not agent else {}
        view = view or self.view(agent)
        code = candidate_code(completion.text, view)
        verdict = await self.test(code, view)
        language = view.language if view.language != self.problem.language else None
        cand = Candidate(
            code=code,
            agent=owner.id,
            round=round,
            mean_logprob=completion.mean_logprob,
            rewrite=role != "draft",
            public=verdict,
            language=language,
        )
        self.candidates.append(cand)
        outcome = {
            "status": verdict.status,
            "passed": verdict.tests_passed,
            "total": verdict.tests_total,
            "summary": messages.summary(verdict),
        }
        await self.ctx.memory.append(
            self.ctx.task_id,
            "drafts",
            {
                "agent": owner.id,
                **by,
                "round": round,
                "role": role,
                "code": code,
                "language": view.language,
                "results": self.results(cand),
                **outcome,
            },
        )
        await self.ctx.memory.append(
            self.ctx.task_id, "verdicts", {"agent": owner.id, **by, "round": round, **outcome}
        )
        await self.ctx.event(role, owner.id, round=round, code=code, **by, **outcome)
        return cand

    async def draft(self, agent: Agent, round: int = 0) -> Candidate | None:
        """A first attempt with the agent's own prompt variant."""
        msgs = messages.draft(self.view(agent), agent.config.prompt_variant)
        return await self.attempt(agent, msgs, role="draft", round=round)

    def best_per_agent(self) -> list[Candidate]:
        """Each agent's candidate passing the most public tests (the latest among equals), team order."""
        best: dict[str, Candidate] = {}
        for c in self.candidates:
            if c.agent not in best or public_rank(c) >= public_rank(best[c.agent]):
                best[c.agent] = c
        order = {a: i for i, a in enumerate(self.team.ids)}
        return sorted(best.values(), key=lambda c: order.get(c.agent, len(order)))

    async def select(
        self, pool: list[Candidate], *, referee: Referee | None = None, duel: DuelWhen = "contested"
    ) -> tuple[list[Candidate], Selection | None]:
        """Ask the context's selector to choose among ``pool`` (with any agent-written inputs and, when
        given, a referee for a vote without a strict majority, or for any split vote with ``duel="split"``),
        and record its vote (memory kind ``votes`` and a
        ``vote`` event). A problem without public tests gets inputs written first (``untested_inputs``),
        unless the budget is spent: then the vote goes on without them."""
        if not pool:
            return pool, None
        programs = {c.code.strip() for c in pool if c.code.strip()}
        if (
            self.untested_inputs
            and not self.problem.public_tests
            and not self.inputs_asked
            and len(programs) > 1
        ):
            try:
                await self.write_inputs(self.untested_inputs, round=INPUTS_ROUND)
            except BudgetExceeded as e:
                await self.budget_spent(e)
        sel = await self.ctx.selector.select(
            self.problem, pool, self.ctx.judge, extra_inputs=self.extra_inputs, referee=referee, duel=duel
        )
        await self.record_vote(sel, pool)
        return pool, sel

    async def budget_spent(self, e: BudgetExceeded) -> None:
        """The budget ran out: the run stops as ``budget`` (what was made is kept), and the trace says so."""
        self.stopped = "budget"
        await self.ctx.event("budget", None, what=e.what, spent=e.spent, limit=e.limit)

    async def write_inputs(self, count: int, *, round: int) -> None:
        """The first agent that answers writes up to ``count`` test inputs into ``extra_inputs`` (stored in
        memory kind ``tests``): inputs to tell candidates apart, run by the selector. Asked once: a second
        ask (the selector's, for a problem without public tests) is skipped even if nothing usable came."""
        self.inputs_asked = True
        for agent in self.active():
            completion = await self.ask(
                agent, messages.inputs(self.problem, count), role="inputs", round=round
            )
            if completion is None:
                continue
            self.extra_inputs = messages.parse_inputs(completion.text, self.problem, limit=count)
            await record_inputs(self.ctx, agent.id, self.extra_inputs)
            return

    async def record_vote(self, selection: Selection, pool: Sequence[Candidate]) -> None:
        """The selector's decision, in memory (kind ``votes``) and in the trace (a ``vote`` event)."""
        group_of = {i: gi for gi, g in enumerate(selection.groups) for i in g}
        chosen_agent = pool[selection.index].agent if selection.index is not None else None
        entry: dict[str, Any] = {
            **selection.model_dump(exclude={"public_verdict"}),
            "agent": chosen_agent,
            "extra_inputs": len(self.extra_inputs),
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
        await self.ctx.memory.append(self.ctx.task_id, "votes", entry)
        await self.ctx.event(
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

    # -- the result -----------------------------------------------------------------------------

    def solution(
        self, label: str, pool: list[Candidate], selection: Selection | None, index: int | None
    ) -> Solution:
        chosen = pool[index] if index is not None and 0 <= index < len(pool) else None
        stopped = self.stopped
        if stopped == "done" and not self.active():
            stopped = "failed"
        return Solution(
            problem_id=self.problem.id,
            strategy=label,
            code=chosen.code if chosen else "",
            language=chosen.language if chosen else None,
            agent=chosen.agent if chosen else None,
            agents=[f"{a.id}={a.config.model}" for a in self.team.agents],
            confidence=selection.confidence if selection is not None else None,
            candidates=pool,
            selection=selection,
            public_verdict=chosen.public if chosen else None,
            stopped=stopped,
            failures=list(self.failures),
            ledger=self.ctx.ledger,
            trace_id=self.ctx.trace.id,
        )


@runtime_checkable
class Strategy(Protocol):
    """A team topology (what the runner calls). Gets the public view of a problem; returns a Solution.

    It lives here, not in :mod:`memdoor.core.protocols`, because it speaks of a Team and a RunContext,
    which themselves use the ports there (see docs/architecture.md).
    """

    name: str

    async def solve(self, problem: Problem, team: Team, ctx: RunContext) -> Solution: ...


class BaseStrategy:
    """The solve skeleton. Subclasses set ``name`` and ``Config`` and implement ``loop``;
    they may override ``choose`` (default: the selector over every agent's best candidate)."""

    name: ClassVar[str] = "base"
    Config: ClassVar[type[StrategyConfig]] = StrategyConfig

    def __init__(self, config: StrategyConfig | None = None, **options: Any):
        if config is not None and options:
            raise UsageError(f"{self.name}: give a config or options, not both")
        self.config = config if config is not None else self.Config(**options)

    def label(self, team: Team) -> str:
        return self.name if self.name == "single" else f"{self.name}:{len(team)}"

    async def solve(self, problem: Problem, team: Team, ctx: RunContext) -> Solution:
        run = TeamRun(
            problem, team, ctx, logprobs=self.config.logprobs, untested_inputs=self.config.untested_inputs
        )
        await ctx.event(
            "strategy", None, name=self.name, team=[f"{a.id}={a.config.model}" for a in team.agents]
        )
        try:
            await self.loop(run)
        except BudgetExceeded as e:
            await run.budget_spent(e)
        pool, selection = await self.choose(run)
        index = selection.index if selection is not None else None
        if index is None:
            index = self.fallback(pool)
        return run.solution(self.label(team), pool, selection, index)

    async def loop(self, run: TeamRun) -> None:
        """The strategy's core loop: ask agents, fill ``run.candidates``, set ``run.stopped``."""
        raise NotImplementedError

    async def choose(self, run: TeamRun) -> tuple[list[Candidate], Selection | None]:
        """The pool of candidates considered and the selector's decision (None: use ``fallback``)."""
        return await run.select(run.best_per_agent())

    @staticmethod
    def fallback(pool: list[Candidate]) -> int | None:
        """Without a selection: the candidate passing the most public tests, the latest among equals."""
        if not pool:
            return None
        return max(range(len(pool)), key=lambda i: (public_rank(pool[i]), i))
