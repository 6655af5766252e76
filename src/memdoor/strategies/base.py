"""What every strategy shares: its config base, the per-problem working state, and the solve skeleton.

A strategy class holds only its configuration. Everything that changes during one problem (candidates,
failed agents, the stop reason, agent-written inputs) lives in a :class:`TeamRun` made fresh by
:meth:`BaseStrategy.solve`, so one strategy object can solve many problems concurrently.

The skeleton: ``solve`` runs the strategy's ``loop`` hook, turns :class:`BudgetExceeded` into
``stopped="budget"`` (keeping every candidate made so far), then calls the ``choose`` hook and
returns a :class:`Solution`. Variants override ``loop`` and ``choose``; nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from memdoor.agents.team import Agent, Team
from memdoor.core.candidates import Candidate, DuelWhen, Selection
from memdoor.core.errors import BudgetExceeded, UsageError
from memdoor.core.messages import Message
from memdoor.core.net import redact_spec
from memdoor.core.problem import Problem, TestCase
from memdoor.core.protocols import Referee
from memdoor.core.solution import Solution
from memdoor.core.verdict import Verdict
from memdoor.problems.languages import answer_in
from memdoor.strategies import drafting, messages, voting
from memdoor.strategies.asking import TeamCalls
from memdoor.strategies.context import RunContext
from memdoor.strategies.drafting import public_rank
from memdoor.text.extract import candidate_code


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


class TeamRun:
    """The working state of one strategy on one problem (the public view only): the team's calls
    (:mod:`~memdoor.strategies.asking`), the candidates (tested and recorded by
    :mod:`~memdoor.strategies.drafting`) and the vote (:mod:`~memdoor.strategies.voting`). The skeleton
    makes the Solution of it (:func:`team_solution`)."""

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
        self.problem, self.team, self.ctx = problem, team, ctx
        self.untested_inputs = untested_inputs
        self.candidates: list[Candidate] = []
        self.extra_inputs: list[TestCase] = []
        self.inputs_asked = False
        self.stopped = "done"
        self.calls = TeamCalls(team, ctx, logprobs=logprobs)
        # the team's calls as strategies make them: run.active(), run.ask(agent, msgs, role=..., round=...)
        self.active, self.ask, self.failures = self.calls.active, self.calls.ask, self.calls.failures

    together = staticmethod(drafting.together)  # run.together(agents, fn): concurrently, every result kept

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
        owner, view = chain or agent, view or self.view(agent)
        code = candidate_code(completion.text, view)
        verdict = await self.test(code, view)
        cand = Candidate(
            code=code, agent=owner.id, round=round, mean_logprob=completion.mean_logprob,
            rewrite=role != "draft", public=verdict,
            language=view.language if view.language != self.problem.language else None,
        )  # fmt: skip
        self.candidates.append(cand)
        by = agent.id if owner is not agent else None
        await drafting.record_draft(
            self.ctx, cand, verdict, problem=self.problem, view=view, role=role, by=by
        )
        return cand

    async def draft(self, agent: Agent, round: int = 0) -> Candidate | None:
        """A first attempt with the agent's own prompt variant."""
        msgs = messages.draft(self.view(agent), agent.config.prompt_variant)
        return await self.attempt(agent, msgs, role="draft", round=round)

    def best_per_agent(self) -> list[Candidate]:
        """Each agent's candidate passing the most public tests (the latest among equals), team order."""
        return drafting.best_per_agent(self.candidates, self.team.ids)

    # -- the vote -------------------------------------------------------------------------------

    async def select(
        self, pool: list[Candidate], *, referee: Referee | None = None, duel: DuelWhen = "contested"
    ) -> tuple[list[Candidate], Selection | None]:
        """The selector's choice among ``pool`` (with any agent-written inputs and, when given, a referee
        for a vote without a strict majority, or for any split vote with ``duel="split"``), recorded. A
        problem without public tests gets inputs written first (``untested_inputs``), unless the budget
        is spent: then the vote goes on without them."""
        if not pool:
            return pool, None
        if voting.wants_inputs(self.problem, pool, self.untested_inputs, self.inputs_asked):
            try:
                await self.write_inputs(self.untested_inputs, round=voting.INPUTS_ROUND)
            except BudgetExceeded as e:
                await self.budget_spent(e)
        sel = await voting.vote(self.ctx, self.problem, pool, self.extra_inputs, referee=referee, duel=duel)
        return pool, sel

    async def write_inputs(self, count: int, *, round: int) -> None:
        """The first agent that answers writes up to ``count`` test inputs into ``extra_inputs``, for the
        selector to run. Asked once: a second ask (the selector's, for a problem without public tests) is
        skipped even if nothing usable came."""
        self.inputs_asked = True
        written = await voting.write_inputs(
            self.ask, self.active(), self.problem, self.ctx, count, round=round
        )
        if written is not None:
            self.extra_inputs = written

    async def budget_spent(self, e: BudgetExceeded) -> None:
        """The budget ran out: the run stops as ``budget`` (what was made is kept), and the trace says so."""
        self.stopped = "budget"
        await self.ctx.event("budget", None, what=e.what, spent=e.spent, limit=e.limit)


def members(team: Team) -> list[str]:
    """``agent0=SPEC`` for each agent, as answers and traces show it (no password or key of a spec's URL)."""
    return [f"{a.id}={redact_spec(a.config.model)}" for a in team.agents]


def team_solution(
    run: TeamRun, label: str, pool: list[Candidate], selection: Selection | None, index: int | None
) -> Solution:
    """What ``run`` produced: ``pool[index]`` as the answer (none without an index), and why it stopped
    (``failed`` when it finished with every agent failed)."""
    chosen = pool[index] if index is not None and 0 <= index < len(pool) else None
    stopped = run.stopped
    if stopped == "done" and not run.active():
        stopped = "failed"
    return Solution(
        problem_id=run.problem.id,
        strategy=label,
        code=chosen.code if chosen else "",
        language=chosen.language if chosen else None,
        agent=chosen.agent if chosen else None,
        agents=members(run.team),
        confidence=selection.confidence if selection is not None else None,
        candidates=pool,
        selection=selection,
        public_verdict=chosen.public if chosen else None,
        stopped=stopped,
        failures=list(run.failures),
        ledger=run.ctx.ledger,
        trace_id=run.ctx.trace.id,
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
        await ctx.event("strategy", None, name=self.name, team=members(team))
        try:
            await self.loop(run)
        except BudgetExceeded as e:
            await run.budget_spent(e)
        pool, selection = await self.choose(run)
        index = selection.index if selection is not None else None
        if index is None:
            index = self.fallback(pool)
        return team_solution(run, self.label(team), pool, selection, index)

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
