"""One chat request, one team run: plan it, admit it, run it under its limits, report what it cost.

:meth:`TeamService.plan` checks a request without doing any work (unknown team → 404, bad request
→ 400); :meth:`TeamService.run` waits for a run slot and calls :func:`memdoor.run.solve.solve_problem`
— the same entry point as ``memdoor solve`` — with the request's deadline (queue wait included) and
token budget; when the request shows no examples, the runner has the team write test inputs first
(a call budgeted and recorded like the others: ``SolveConfig.test_inputs``). Outcomes
the client must hear about are errors of :mod:`memdoor.server.errors`: the deadline (504
``timeout``), the token budget (504 ``budget_exceeded``), no code at all (502). The trace is saved
like any run's (``memdoor trace ID``); its id is the completion id and the ``x-memdoor-trace-id``
header.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from memdoor.core.budget import Budget
from memdoor.core.errors import MemdoorError, UsageError
from memdoor.core.problem import Problem
from memdoor.core.solution import Solution
from memdoor.core.trace import TraceEvent
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem
from memdoor.server.admission import Admission, Ticket
from memdoor.server.chat import ChatProblem, chat_problem
from memdoor.server.config import ServeConfig
from memdoor.server.errors import (
    BudgetSpent,
    DeadlineExceeded,
    InternalError,
    InvalidRequest,
    ModelNotFound,
    NoSolution,
)
from memdoor.server.schema import ChatRequest, ChatUsage, lower_limit
from memdoor.server.teams import parse_team, team_id

log = logging.getLogger("memdoor.serve")


@dataclasses.dataclass(frozen=True)
class PlannedRequest:
    """A checked request, before any work: the team, the problem and the limits."""

    model: str
    """The team's model id (``memdoor/parallel-5``)."""
    chat: ChatProblem
    config: SolveConfig
    timeout_s: float | None
    budget_tokens: int | None
    created: int
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    """What became of the client's sampling settings (the ``client_settings`` of the answer)."""


@dataclasses.dataclass(frozen=True)
class RequestLimits:
    """One request's limits: the server's, lowered by the request's own."""

    max_tokens: int
    timeout_s: float | None
    budget_tokens: int | None


def request_limits(config: ServeConfig, request: ChatRequest, what: str) -> RequestLimits:
    """The limits of ``request`` to a ``what`` (a team, a review); InvalidRequest for n > 1 or a cap below 16."""
    if request.n != 1:
        raise InvalidRequest(f"a {what} gives one answer: n must be 1", param="n")
    cap = lower_limit(config.max_tokens, request.call_cap())
    if cap < 16:
        raise InvalidRequest(f"max_tokens must be at least 16 for a {what}", param="max_tokens")
    opts = request.memdoor
    return RequestLimits(
        max_tokens=cap,
        timeout_s=lower_limit(config.timeout_s, opts.timeout if opts else None),
        budget_tokens=lower_limit(config.budget_tokens, opts.budget_tokens if opts else None),
    )


@dataclasses.dataclass
class ServedRun:
    """A finished run the client gets as an answer."""

    job: PlannedRequest
    solution: Solution
    problem: Problem
    tests_source: str

    @property
    def trace_id(self) -> str:
        return self.solution.trace_id

    @property
    def completion_id(self) -> str:
        return f"chatcmpl-{self.trace_id}"

    def content(self) -> str:
        """The assistant message: the chosen code fenced in the problem's language, after the naming note
        when the request named no function (the team chose the name)."""
        note = f"{self.solution.naming}\n\n" if self.solution.naming else ""
        return f"{note}```{self.problem.language}\n{self.solution.code.strip(chr(10)).rstrip()}\n```"

    def usage(self) -> ChatUsage:
        return usage_of(self.solution)

    def metadata(self) -> dict[str, Any]:
        """What the team did, for the ``memdoor`` field of the answer."""
        r = self.solution.record()
        totals, v, tests = r.totals, r.verdict, self.problem.public_tests
        return {
            **r.model_dump(mode="json", include=METADATA_FIELDS),
            "team": self.job.model,
            "naming": self.solution.naming,
            "tests": {
                "source": self.tests_source,
                "count": len(tests),
                "expected_outputs": any(t.output is not None for t in tests),
                "status": None if v is None else v.status,
                "passed": None if v is None else v.tests_passed,
                "total": None if v is None else v.tests_total,
            },
            "calls": totals.calls,
            "seconds": round(totals.wall_seconds, 3),
            "usd": totals.usd,
            "client_settings": self.job.settings,
        }


METADATA_FIELDS = {
    "trace_id", "strategy", "agents", "agent", "confidence", "agreement", "p_correct", "p_correct_basis",
    "stopped", "failures", "error",
}  # fmt: skip
"""Fields of :meth:`Solution.record` in the ``memdoor`` field of an answer."""


def usage_of(solution: Solution) -> ChatUsage:
    """The whole team's tokens: every call in the ledger (test writing included)."""
    return ChatUsage.of(solution.ledger)


TEAM_TEMPERATURE = (
    "not applied: each agent samples at its own temperature (0.2 to 1.0), which is the team's diversity"
)


def client_settings(request: ChatRequest, *, cap: int, seed: int) -> dict[str, Any]:
    """What the team did with the client's sampling settings, said in every answer: ``max_tokens`` caps
    every agent's call (lowered to the server's cap), ``seed`` is the team's base seed, ``temperature``
    is not applied, and other OpenAI fields (``top_p``, ``stop``, ``tools``...) are accepted and ignored."""
    out: dict[str, Any] = {"max_tokens": {"asked": request.call_cap(), "applied": cap}}
    out["seed"] = {"asked": request.seed, "applied": seed}
    if request.temperature is not None:
        out["temperature"] = {"asked": request.temperature, "applied": None, "note": TEAM_TEMPERATURE}
    ignored = sorted(k for k in (request.model_extra or {}) if k not in ("stream_options",))
    if ignored:
        out["ignored"] = ignored
    return out


def solve_config(config: ServeConfig, spec: StrategySpec, *, seed: int, max_tokens: int) -> SolveConfig:
    """The runner's config for one request to the team ``spec``."""
    return SolveConfig(
        strategy=spec,
        models=list(config.models),
        seed=seed,
        max_tokens=max_tokens,
        options=dict(config.options.get(spec.name, {})),
    )


def check_teams(config: ServeConfig) -> None:
    """UsageError when a served team cannot be built (bad strategy options), before any request."""
    for spec in config.team_table().values():
        solve_config(config, spec, seed=config.seed, max_tokens=config.max_tokens).make_strategy()


class TeamService:
    """Runs teams for chat requests, sharing one :class:`RunEnv` (models, sandbox, memory)."""

    def __init__(self, config: ServeConfig, env: RunEnv):
        self.config = config
        self.env = env
        self.teams: dict[str, StrategySpec] = config.team_table()
        self.admission = Admission(config.concurrency, config.max_queue, retry_after_s=config.retry_after_s)
        self.created = int(time.time())
        check_teams(config)

    def _solve_config(self, spec: StrategySpec, *, seed: int, max_tokens: int) -> SolveConfig:
        return solve_config(self.config, spec, seed=seed, max_tokens=max_tokens)

    def resolve(self, model: str) -> str:
        """The served team id ``model`` names (aliases such as ``parallel:5`` accepted), else 404."""
        if model in self.teams:
            return model
        try:
            canonical = team_id(parse_team(model))
        except UsageError:
            canonical = None
        if canonical not in self.teams:
            raise ModelNotFound(
                f"The model {model!r} does not exist on this server; choose one of: {', '.join(self.teams)}",
                param="model",
            )
        return canonical

    def plan(self, request: ChatRequest) -> PlannedRequest:
        """Check ``request`` and plan its run (no work done). ModelNotFound, InvalidRequest."""
        model = self.resolve(request.model)
        limits = request_limits(self.config, request, "team")
        chat = chat_problem(request.messages)
        seed = self.config.seed if request.seed is None else request.seed
        return PlannedRequest(
            settings=client_settings(request, cap=limits.max_tokens, seed=seed),
            model=model,
            chat=chat,
            config=self._solve_config(self.teams[model], seed=seed, max_tokens=limits.max_tokens),
            timeout_s=limits.timeout_s,
            budget_tokens=limits.budget_tokens,
            created=int(time.time()),
        )

    async def run(
        self,
        job: PlannedRequest,
        ticket: Ticket,
        *,
        on_event: Callable[[TraceEvent], None] | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> ServedRun:
        """Wait for a slot and run the team, all within the job's deadline; always releases ``ticket``.

        ``on_start(trace_id)`` is called when the team starts; ``on_event`` with every trace event.
        Raises DeadlineExceeded, BudgetSpent or NoSolution (with the trace id when there was a run).
        """
        started: list[str] = []

        def start(trace_id: str) -> None:
            started.append(trace_id)
            if on_start is not None:
                on_start(trace_id)

        deadline = asyncio.timeout(job.timeout_s)
        try:
            async with deadline, ticket.slot():
                return await self._solve(job, start, on_event)
        except TimeoutError:
            if not deadline.expired():
                raise
            where = "while the team worked" if started else "while waiting for a free team"
            raise DeadlineExceeded(
                f"the request took longer than its {job.timeout_s:g} s time limit ({where})",
                trace_id=started[0] if started else None,
            ) from None
        finally:
            ticket.release()
            if started:
                await self.env.memory.release(started[0])  # the trace is on disk; memory must not grow

    async def _solve(
        self,
        job: PlannedRequest,
        on_start: Callable[[str], None],
        on_event: Callable[[TraceEvent], None] | None,
    ) -> ServedRun:
        problem, source = job.chat.problem, job.chat.tests_source
        config = job.config.model_copy(
            update={
                "budget": Budget(tokens=job.budget_tokens),
                "test_inputs": self.config.test_inputs,
                "name_function": job.chat.target.found_by == "default",
            }
        )
        env = dataclasses.replace(self.env, on_event=on_event, on_start=on_start)
        solution = await solve_problem(problem, config, env)
        bug = solution.error_class
        if bug is not None and not issubclass(bug, MemdoorError):  # decided by type: details stay in the log
            log.error("team run %s failed: %s", solution.trace_id, solution.error)
            raise InternalError("internal error; see the server log", trace_id=solution.trace_id)
        if solution.written_tests:
            problem, source = problem.model_copy(update={"public_tests": solution.written_tests}), "team"
        elif solution.tests_note:
            log.info("team wrote no test inputs: %s", solution.tests_note)
        used = usage_of(solution).total_tokens
        stopped = solution.stopped == "budget"
        if job.budget_tokens is not None and (stopped or used > job.budget_tokens):
            raise BudgetSpent(
                f"the team spent {used} tokens, over the request's budget of {job.budget_tokens}"
                + (" (it stopped early)" if stopped else ""),
                trace_id=solution.trace_id,
            )
        if not solution.code.strip():
            raise NoSolution(
                f"the team produced no code: {solution.why_no_code()}", trace_id=solution.trace_id
            )
        return ServedRun(job, solution, problem, source)
