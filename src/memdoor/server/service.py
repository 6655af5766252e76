"""One chat request, one team run: plan it, admit it, run it under its limits, report what it cost.

:meth:`TeamService.plan` checks a request without doing any work (unknown team → 404, bad request
→ 400); :meth:`TeamService.run` waits for a run slot, lets the team write test inputs when the
request shows no examples, and calls :func:`memdoor.runner.solve_problem` — the same entry point as
``memdoor solve`` — with the request's deadline (queue wait included) and token budget. Outcomes
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
from collections.abc import Callable, Sequence
from typing import Any

from memdoor.budget import Budget
from memdoor.errors import UsageError
from memdoor.memory.inproc import InProcMemory
from memdoor.models.types import Message, ModelResponse
from memdoor.models.types import Usage as CallUsage
from memdoor.problems.model import Problem
from memdoor.protocols import Memory, Model
from memdoor.runner import RunEnv, SolveConfig, StrategySpec, solve_problem
from memdoor.server.admission import Admission, Ticket
from memdoor.server.chat import ChatProblem, chat_problem
from memdoor.server.config import ServeConfig
from memdoor.server.errors import BudgetSpent, DeadlineExceeded, InvalidRequest, ModelNotFound, NoSolution
from memdoor.server.schema import ChatRequest, Usage
from memdoor.server.teams import parse_team, team_id
from memdoor.solution import Solution
from memdoor.strategies.testgen import write_tests
from memdoor.trace import TraceEvent

log = logging.getLogger("memdoor.serve")

TEST_WRITING_TOKENS = 512
"""Completion cap of the call in which the team writes test inputs (that of the seed protocol)."""


class TaskProbe:
    """The run's memory, seen through a wrapper that notes the first task id written to it.

    :func:`solve_problem` writes its first event under the trace id before doing anything else, so
    the probe learns the trace id as the run starts (``on_task`` is called then). ``aclose`` does
    nothing: the memory is the server's, shared by every request.
    """

    def __init__(self, memory: Memory, on_task: Callable[[str], None] | None = None):
        self._memory = memory
        self._on_task = on_task
        self.task_id: str | None = None

    def _seen(self, task_id: str) -> None:
        if self.task_id is None:
            self.task_id = task_id
            if self._on_task is not None:
                self._on_task(task_id)

    async def append(self, task_id: str, kind: str, entry: dict[str, Any]) -> int:
        self._seen(task_id)
        return await self._memory.append(task_id, kind, entry)

    async def entries(self, task_id: str, kind: str) -> list[dict[str, Any]]:
        return await self._memory.entries(task_id, kind)

    async def set_final(self, task_id: str, answer: dict[str, Any]) -> None:
        self._seen(task_id)
        await self._memory.set_final(task_id, answer)

    async def get_final(self, task_id: str) -> dict[str, Any] | None:
        return await self._memory.get_final(task_id)

    async def aclose(self) -> None:
        return None


class MeteredModel:
    """A model whose calls' usage is added up (the test-writing call is made outside the ledger)."""

    def __init__(self, model: Model):
        self._model = model
        self.spec = model.spec
        self.usage = CallUsage()
        self.calls = 0

    async def complete(self, messages: Sequence[Message], **kwargs: Any) -> ModelResponse:
        self.calls += 1
        resp = await self._model.complete(messages, **kwargs)
        self.usage.prompt_tokens += resp.usage.prompt_tokens
        self.usage.completion_tokens += resp.usage.completion_tokens
        self.usage.latency_s += resp.usage.latency_s
        return resp

    async def aclose(self) -> None:
        return None


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


@dataclasses.dataclass
class Outcome:
    """A finished run the client gets as an answer."""

    job: PlannedRequest
    solution: Solution
    problem: Problem
    tests_source: str
    test_writing: CallUsage
    test_writing_calls: int = 0

    @property
    def trace_id(self) -> str:
        return self.solution.trace_id

    @property
    def completion_id(self) -> str:
        return f"chatcmpl-{self.trace_id}"

    def content(self) -> str:
        """The assistant message: the chosen code in a python fence."""
        return f"```python\n{self.solution.code.strip(chr(10)).rstrip()}\n```"

    def usage(self) -> Usage:
        return usage_of(self.solution, self.test_writing)

    def metadata(self) -> dict[str, Any]:
        """What the team did, for the ``memdoor`` field of the answer."""
        s, v = self.solution, self.solution.verdict
        totals = s.ledger.totals()
        return {
            "trace_id": s.trace_id,
            "team": self.job.model,
            "strategy": s.strategy,
            "agents": s.agents,
            "agent": s.agent,
            "confidence": s.confidence,
            "stopped": s.stopped,
            "tests": {
                "source": self.tests_source,
                "count": len(self.problem.public_tests),
                "expected_outputs": any(t.output is not None for t in self.problem.public_tests),
                "status": None if v is None else v.status,
                "passed": None if v is None else v.tests_passed,
                "total": None if v is None else v.tests_total,
            },
            "calls": totals.calls + self.test_writing_calls,
            "seconds": round(totals.wall_seconds, 3),
            "usd": totals.usd,
            "failures": [f.model_dump() for f in s.failures],
            "error": s.error,
        }


def usage_of(solution: Solution, extra: CallUsage | None = None) -> Usage:
    """The whole team's tokens (every call in the ledger, plus ``extra``)."""
    t = solution.ledger.totals()
    prompt = t.prompt_tokens + (extra.prompt_tokens if extra else 0)
    completion = t.completion_tokens + (extra.completion_tokens if extra else 0)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


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


def _lower(server: float | int | None, asked: float | int | None):
    """The smaller limit (None: no limit)."""
    if server is None:
        return asked
    return server if asked is None else min(server, asked)


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
        if request.n != 1:
            raise InvalidRequest("a team gives one answer: n must be 1", param="n")
        chat = chat_problem(request.messages)
        cap = _lower(self.config.max_tokens, request.call_cap())
        if cap < 16:
            raise InvalidRequest("max_tokens must be at least 16 for a team", param="max_tokens")
        opts = request.memdoor
        seed = self.config.seed if request.seed is None else request.seed
        return PlannedRequest(
            model=model,
            chat=chat,
            config=self._solve_config(self.teams[model], seed=seed, max_tokens=cap),
            timeout_s=_lower(self.config.timeout_s, opts.timeout if opts else None),
            budget_tokens=_lower(self.config.budget_tokens, opts.budget_tokens if opts else None),
            created=int(time.time()),
        )

    async def run(
        self,
        job: PlannedRequest,
        ticket: Ticket,
        *,
        on_event: Callable[[TraceEvent], None] | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> Outcome:
        """Wait for a slot and run the team, all within the job's deadline; always releases ``ticket``.

        ``on_start(trace_id)`` is called when the team starts; ``on_event`` with every trace event.
        Raises DeadlineExceeded, BudgetSpent or NoSolution (with the trace id when there was a run).
        """
        probe = TaskProbe(self.env.memory, on_start)
        deadline = asyncio.timeout(job.timeout_s)
        try:
            async with deadline, ticket.slot():
                return await self._solve(job, probe, on_event)
        except TimeoutError:
            if not deadline.expired():
                raise
            where = "while the team worked" if probe.task_id else "while waiting for a free team"
            raise DeadlineExceeded(
                f"the request took longer than its {job.timeout_s:g} s time limit ({where})",
                trace_id=probe.task_id,
            ) from None
        finally:
            ticket.release()
            if probe.task_id is not None and isinstance(self.env.memory, InProcMemory):
                await self.env.memory.delete(probe.task_id)  # the trace is on disk; memory must not grow

    async def _solve(
        self, job: PlannedRequest, probe: TaskProbe, on_event: Callable[[TraceEvent], None] | None
    ) -> Outcome:
        problem, source = job.chat.problem, job.chat.tests_source
        writing, writing_calls = CallUsage(), 0
        if not problem.public_tests and self.config.test_inputs:
            problem, source, writing, writing_calls = await self._write_tests(problem, job)
        budget = job.budget_tokens
        if budget is not None:
            budget -= writing.prompt_tokens + writing.completion_tokens
            if budget <= 0:
                raise BudgetSpent(
                    f"the request's budget of {job.budget_tokens} tokens was spent writing tests"
                )
        spent: list[TraceEvent] = []

        def events(ev: TraceEvent) -> None:
            if ev.kind == "budget":
                spent.append(ev)
            if on_event is not None:
                on_event(ev)

        config = job.config.model_copy(update={"budget": Budget(tokens=budget)})
        env = dataclasses.replace(self.env, memory=probe, on_event=events)
        solution = await solve_problem(problem, config, env)
        used = usage_of(solution, writing).total_tokens
        if job.budget_tokens is not None and (spent or used > job.budget_tokens):
            raise BudgetSpent(
                f"the team spent {used} tokens, over the request's budget of {job.budget_tokens}"
                + (" (it stopped early)" if spent else ""),
                trace_id=solution.trace_id,
            )
        if not solution.code.strip():
            why = solution.error or (
                "; ".join(f"{f.agent}: {f.error}" for f in solution.failures)
                or f"no candidate had a code block (stopped: {solution.stopped})"
            )
            raise NoSolution(f"the team produced no code: {why}", trace_id=solution.trace_id)
        return Outcome(job, solution, problem, source, writing, writing_calls)

    async def _write_tests(
        self, problem: Problem, job: PlannedRequest
    ) -> tuple[Problem, str, CallUsage, int]:
        """The team's first model writes test inputs (no outputs), as the seed protocol does."""
        model = MeteredModel(self.env.pool.get(job.config.models[0]))
        written, note = await write_tests(problem, model, self.config.test_inputs, seed=job.config.seed)
        if note:
            log.info("team wrote no test inputs: %s", note)
        return written, ("team" if written.public_tests else "none"), model.usage, model.calls
