"""Solving one problem with a team: build the team, run the strategy on the public view, grade outside.

The one entry point others call (``memdoor solve``, the bench, the worker, the server)::

    async with open_env() as env:
        solution = await solve_problem(problem, SolveConfig(strategy=StrategySpec.parse("parallel:5")), env)

:func:`solve_problem` never loses a run: whatever happens inside the strategy, it returns a
:class:`Solution` carrying the ledger, the trace id and, when something broke, ``error``; the final
answer and the config are written to memory (and the trace to ``env.trace_dir``) in ``finally``.
Hidden tests are used only here, after the strategy returned, to grade: the chosen code
(``verdict``/``passed``) and every distinct candidate (``oracle``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memdoor.budget import Budget, BudgetTracker
from memdoor.calibration import Calibration, load_default
from memdoor.errors import BudgetExceeded, MemdoorError, UsageError, validation_problems
from memdoor.judge import Judge
from memdoor.ledger import Ledger, PriceFn, unpriced
from memdoor.models.catalog import parameters_of
from memdoor.models.pool import ModelPool
from memdoor.problems.jsonl import parse_json
from memdoor.problems.languages import LANGUAGES, answer_in, check_mixable
from memdoor.problems.model import Problem
from memdoor.protocols import Memory, Sandbox
from memdoor.registry import load, names
from memdoor.solution import Solution
from memdoor.strategies.base import Strategy
from memdoor.strategies.context import RunContext
from memdoor.strategies.naming import NAMING_TOKENS, name_function
from memdoor.strategies.testgen import TEST_WRITING_TOKENS, write_tests
from memdoor.team import Agent, Team, team_configs
from memdoor.trace import Trace, TraceEvent
from memdoor.tracestore import TraceRecord, save_trace

if TYPE_CHECKING:
    from memdoor.sandbox.config import SandboxConfig

DEFAULT_MODEL = "local:qwen2.5-coder-0.5b"
DEFAULT_TEMPERATURES = (0.2, 0.6, 0.8, 0.4, 1.0)


class StrategySpec(BaseModel):
    """A strategy and its team size, written ``parallel:5`` (``single`` alone means one agent)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(
        description="Strategy name from the registry: single, parallel, sequential, shared, hybrid."
    )
    agents: int = Field(default=1, ge=1, description="Number of agents in the team.")

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in names("strategy"):
            raise ValueError(f"unknown strategy {v!r} (choose from: {', '.join(names('strategy'))})")
        return v

    @classmethod
    def parse(cls, text: str, agents: int | None = None) -> StrategySpec:
        """``"parallel:5"`` → (parallel, 5); ``"single"`` → (single, 1); ``agents`` overrides a missing count."""
        name, sep, count = text.strip().partition(":")
        if name not in names("strategy"):
            raise UsageError(f"unknown strategy {name!r} (choose from: {', '.join(names('strategy'))})")
        if sep:
            try:
                n = int(count)
            except ValueError:
                raise UsageError(f"bad strategy {text!r}: expected NAME or NAME:AGENTS") from None
        else:
            n = agents if agents is not None else 1
        if n < 1:
            raise UsageError(f"bad strategy {text!r}: a team needs at least one agent")
        return cls(name=name, agents=n)

    def __str__(self) -> str:
        return self.name if self.name == "single" and self.agents == 1 else f"{self.name}:{self.agents}"


def parse_options(items: list[str], *, flag: str = "--option") -> dict[str, Any]:
    """``["rounds=2", "stop_when_all_pass=false"]`` → ``{"rounds": 2, "stop_when_all_pass": False}``
    (a value is read as JSON when it is JSON, else kept as text); UsageError naming ``flag`` for an item
    that is not KEY=VALUE. The strategy checks the keys and values (:meth:`SolveConfig.make_strategy`)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad {flag} {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = parse_json(value.strip())
        except ValueError:  # not JSON (or nested too deeply): the text itself
            out[key.strip()] = value.strip()
    return out


class SolveConfig(BaseModel):
    """Everything that decides how a team solves a problem (recorded with every result)."""

    model_config = ConfigDict(extra="forbid")

    strategy: StrategySpec = Field(description="Strategy and team size.")
    models: list[str] = Field(
        default_factory=lambda: [DEFAULT_MODEL],
        min_length=1,
        description="Model specs, assigned to agents round-robin (several make a mixed team).",
    )
    budget: Budget = Field(default_factory=Budget, description="Per-problem limits: tokens, calls, seconds.")
    seed: int = Field(
        default=0, description="Base sampling seed; the k-th agent of a model samples with seed + 1000 * k."
    )
    max_tokens: int = Field(default=1024, ge=16, description="Completion token cap per model call.")
    temperatures: list[float] = Field(
        default_factory=lambda: list(DEFAULT_TEMPERATURES),
        min_length=1,
        description="Sampling temperatures, assigned to agents in order (agent 0 gets the first).",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Strategy options (its Config fields, e.g. rounds, repair_rounds, inputs); "
        "unknown ones are an error.",
    )
    name_function: bool = Field(
        default=False,
        description="The request named no function (the problem's func_name is a placeholder): the team's "
        "first agent chooses a descriptive name before the strategy runs; Solution.naming says so.",
    )
    test_inputs: int = Field(
        default=0,
        ge=0,
        description="For a problem with no tests at all: test inputs (no outputs) the team's first agent "
        "writes before the strategy runs, so candidates can be told apart by behaviour (0: none).",
    )
    params: dict[str, float] = Field(
        default_factory=dict,
        description="Parameter counts by model spec or name, for models the catalog does not know "
        "(compute ≈ 2 × parameters × tokens; a compute budget needs every agent's size).",
    )
    languages: list[str] = Field(
        default_factory=list,
        description="Languages assigned to agents round-robin (agent 0 gets the first): a mixed-language "
        "team, for standard-input problems only (their tests are the same in every language); empty: every "
        "agent writes in the problem's language.",
    )
    selector: str = Field(default="vote", description="Selector name from the registry.")
    selector_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Selector settings, e.g. {'k': 3} (the k-of-N majority) or {'weighting': 'mean'}.",
    )

    @field_validator("languages")
    @classmethod
    def _languages(cls, v: list[str]) -> list[str]:
        unknown = [x for x in v if x not in LANGUAGES]
        if unknown:
            raise ValueError(f"unknown language {unknown[0]!r} (choose from: {', '.join(LANGUAGES)})")
        return v

    def make_selector(self) -> Any:
        """The configured selector (its own checks raise UsageError for bad settings)."""
        try:
            return load("selector", self.selector)(**self.selector_options)
        except TypeError as e:
            raise UsageError(f"bad settings for selector {self.selector}: {e}") from None

    def settings(self) -> dict[str, Any]:
        """What decides the team's behaviour beyond the strategy's name and models: the strategy's options
        with its defaults filled in, the sampling temperatures and the selector, and for a mixed team how its
        agents sample (by rank among their model's agents; earlier, by team position). A bench records it
        per row, so a default changed between two sittings of one run is caught, not mixed into its results."""
        settings: dict[str, Any] = {
            "options": self.make_strategy().config.recorded(),
            "temperatures": list(self.temperatures),
            "selector": self.selector,
            "selector_options": dict(self.selector_options),
        }
        if len(set(self.models)) > 1:  # a mixed team: agents sample by rank within their model (team_configs)
            settings["sampling"] = "rank-in-model"
        return settings

    def make_strategy(self) -> Strategy:
        """The configured strategy object (options checked against its Config: UsageError if bad)."""
        cls = load("strategy", self.strategy.name)
        try:
            return cls(cls.Config(**self.options))
        except ValidationError as e:
            problems = validation_problems(e)
            known = ", ".join(cls.Config.model_fields)
            raise UsageError(
                f"bad options for strategy {self.strategy.name}: {problems} (its options: {known})"
            ) from None


@dataclass
class RunEnv:
    """What many problems share: models, sandbox, memory, prices, an event sink and the trace folder.

    Built once (see :func:`open_env`) and passed to every :func:`solve_problem` call.
    """

    pool: ModelPool
    sandbox: Sandbox
    memory: Memory
    price: PriceFn = unpriced
    on_event: Callable[[TraceEvent], None] | None = None
    trace_dir: Path | None = None
    sandbox_slots: asyncio.Semaphore | None = None
    on_start: Callable[[str], None] | None = None
    """Called with the run's trace id as each run starts, before anything else."""
    calibration: Calibration | None = None
    """The estimate of an answer being correct (``Solution.p_correct``); None: answers carry none."""


@contextlib.asynccontextmanager
async def open_env(
    *,
    memory_url: str | None = None,
    memory_options: dict[str, Any] | None = None,
    sandbox: Sandbox | None = None,
    sandbox_config: SandboxConfig | None = None,
    pool: ModelPool | None = None,
    price: PriceFn | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    trace_dir: Path | None = None,
    slots: int | None = None,
) -> AsyncIterator[RunEnv]:
    """The one builder of a :class:`RunEnv` (for solve, bench, serve and workers).

    Opens what it is not given — a model pool, the memory at ``memory_url`` (``memory_options`` go to
    :func:`memdoor.memory.open_memory`), a sandbox (``sandbox_config`` or the defaults) — and on exit
    closes exactly what it opened, last opened first, also when opening a later part failed. Parts
    given are the caller's to close. ``slots``: candidates running at once over every run of the env
    (None: no cap beyond the sandbox's own).
    """
    from memdoor.memory import open_memory

    async with contextlib.AsyncExitStack() as stack:
        if pool is None:
            pool = ModelPool()
            stack.push_async_callback(pool.aclose)
        memory = open_memory(memory_url, **(memory_options or {}))
        stack.push_async_callback(memory.aclose)
        if sandbox is None:
            from memdoor.sandbox import SandboxConfig, open_sandbox

            sandbox = stack.enter_context(open_sandbox(sandbox_config or SandboxConfig()))
        yield RunEnv(
            pool=pool,
            sandbox=sandbox,
            memory=memory,
            price=price or default_price(),
            on_event=on_event,
            trace_dir=trace_dir,
            sandbox_slots=asyncio.Semaphore(slots) if slots else None,
            calibration=load_default(),
        )


def default_price() -> PriceFn:
    """Prices from the built-in table and ``$MEMDOOR_PRICES`` (unknown models are unpriced)."""
    from memdoor.models.prices import load_prices

    return load_prices().price


def build_team(config: SolveConfig, pool: ModelPool) -> Team:
    """The team of ``config.strategy.agents`` agents: models round-robin, temperatures and seeds varied."""
    configs = team_configs(
        config.models,
        config.strategy.agents,
        temperatures=config.temperatures,
        seed=config.seed,
        max_tokens=config.max_tokens,
        languages=config.languages,
    )
    for c in configs:
        c.parameters = parameters_of(c.model, config.params)
    return Team([Agent(c, pool.get(c.model)) for c in configs])


async def solve_problem(problem: Problem, config: SolveConfig, env: RunEnv) -> Solution:
    """One problem, one team, one strategy; graded on all tests afterwards. Never raises for a failed run
    (the Solution carries ``error``), except for cancellation and a selector ``config`` cannot make
    (UsageError, before anything runs) and a mixed-language team on a problem whose tests fit one language."""
    label = str(config.strategy)
    check_mixable(problem, config.languages)  # UsageError before anything runs: tests fit one language only
    trace = Trace()
    judge = Judge(env.sandbox, env.sandbox_slots)
    ctx = RunContext(
        judge=judge,
        memory=env.memory,
        selector=config.make_selector(),
        budget=BudgetTracker(config.budget),
        ledger=Ledger(),
        trace=trace,
        price=env.price,
        on_event=env.on_event,
    )
    started = time.monotonic()
    solved_at: float | None = None
    solution: Solution | None = None
    if env.on_start is not None:
        env.on_start(trace.id)
    try:
        await ctx.event(
            "start", None, problem=problem.id, strategy=label, config=config.model_dump(mode="json")
        )
        strategy = config.make_strategy()
        team = build_team(config, env.pool)
        written, note, naming = [], None, None
        if config.name_function and problem.func_name:
            tokens = min(NAMING_TOKENS, config.max_tokens)
            problem, naming = await name_function(problem, team[0], ctx, max_tokens=tokens)
        if config.test_inputs and not problem.public_tests and not problem.hidden_tests:
            problem, note = await team_tests(problem, team, ctx, config)
            written = list(problem.public_tests)
        solution = await strategy.solve(problem.public_view(), team, ctx)
        solution.strategy = label
        solution.written_tests, solution.tests_note, solution.naming = written, note, naming
        estimate(solution, label, env.calibration)
        solved_at = time.monotonic()  # the team's time ends here: grading is the judge's, not the team's
        await grade_solution(problem, solution, ctx, judge)
    except Exception as e:  # a failed run is a result, not a crash
        solution = failed_solution(problem, label, ctx, solution, e)
        with contextlib.suppress(MemdoorError):  # the event is in the trace even if memory is down
            await ctx.event("error", None, error=solution.error)
    finally:
        if solution is None:  # cancelled before the strategy returned
            solution = failed_solution(problem, label, ctx, None, None)
        ctx.ledger.wall_seconds = (solved_at or time.monotonic()) - started
        solution.ledger = ctx.ledger
        solution.trace_id = trace.id
        await record(problem, config, solution, ctx, env)
    return solution


async def team_tests(
    problem: Problem, team: Team, ctx: RunContext, config: SolveConfig
) -> tuple[Problem, str | None]:
    """The team's first agent writes test inputs for a problem with none (a recorded, budgeted call):
    the problem with them as public tests, or unchanged and why not."""
    try:
        written, note = await write_tests(
            problem, team[0], ctx, config.test_inputs, max_tokens=min(TEST_WRITING_TOKENS, config.max_tokens)
        )
    except BudgetExceeded as e:  # the strategy stops at once too, with stopped="budget"
        await ctx.event("budget", None, what=e.what, spent=e.spent, limit=e.limit)
        return problem, str(e)
    return written, note or None


def failed_solution(
    problem: Problem, label: str, ctx: RunContext, partial: Solution | None, error: BaseException | None
) -> Solution:
    """The run as far as it went, with ``error`` and its type set (``interrupted`` when ``error`` is None)."""
    if partial is None:
        partial = Solution(problem_id=problem.id, strategy=label, ledger=ctx.ledger, trace_id=ctx.trace.id)
    return partial.failed_with(error)


def estimate(solution: Solution, strategy: str, calibration: Calibration | None) -> None:
    """Set the answer's estimated probability of being correct (before grading: from what the team saw)."""
    signals = solution.signals()
    if calibration is None or signals is None:
        return
    solution.p_correct = round(calibration.predict(signals, strategy), 4)
    solution.p_correct_basis = calibration.fitted_on


async def grade_solution(problem: Problem, solution: Solution, ctx: RunContext, judge: Judge) -> None:
    """Grade the chosen code on public + hidden tests, and the oracle over every distinct candidate.

    A problem with no hidden tests is graded on its public tests only (``hidden_tests`` is 0 in the record).
    """
    solution.verdict = await judge.grade(answer_in(problem, solution.language), solution.code)
    solution.passed = solution.verdict.passed
    verdicts = {solution.code.strip(): solution.verdict}
    oracle = solution.passed
    for c in solution.candidates:
        key = c.code.strip()
        if oracle or key in verdicts or not key:
            continue
        if problem.public_tests and c.public is not None and not c.public.passed:
            continue  # fails a public test, so it fails grading (public tests are graded first)
        verdicts[key] = await judge.grade(answer_in(problem, c.language), c.code)
        oracle = verdicts[key].passed
    solution.oracle = oracle
    await ctx.event(
        "graded",
        None,
        passed=solution.passed,
        status=solution.verdict.status,
        tests_passed=solution.verdict.tests_passed,
        tests_total=solution.verdict.tests_total,
        hidden_tests=len(problem.hidden_tests),
        oracle=oracle,
    )


FINAL_FIELDS = {
    "problem_id", "strategy", "code", "agent", "agents", "passed", "verdict", "confidence", "oracle",
    "stopped", "failures", "error", "error_type", "trace_id",
}  # fmt: skip
"""Fields of :meth:`Solution.record` in the final answer (with ``hidden_tests``, ``ledger``, ``config``)."""


def final_answer(problem: Problem, config: SolveConfig, solution: Solution) -> dict[str, Any]:
    """The team's final answer as stored in memory: result, cost and config, no test contents."""
    r = solution.record()
    return {
        **r.model_dump(mode="json", include=FINAL_FIELDS),
        "hidden_tests": len(problem.hidden_tests),
        "ledger": r.totals.model_dump(),
        "config": config.model_dump(mode="json"),
    }


async def record(
    problem: Problem, config: SolveConfig, solution: Solution, ctx: RunContext, env: RunEnv
) -> None:
    """Write the final answer and the whole trace to memory, and the trace to ``env.trace_dir``.

    Recording failures never hide the result: they are noted in ``solution.error`` instead.
    """
    answer = final_answer(problem, config, solution)
    rec = TraceRecord(trace=ctx.trace, final=answer)
    problems: list[str] = []
    try:
        await env.memory.set_final(ctx.task_id, answer)
        await env.memory.append(ctx.task_id, "trace", rec.model_dump(mode="json"))
    except MemdoorError as e:
        problems.append(f"memory: {type(e).__name__}: {e}")
    if env.trace_dir is not None:
        try:
            save_trace(env.trace_dir, rec)
        except OSError as e:
            problems.append(f"trace file: {type(e).__name__}: {e}")
    if problems:
        note = "; ".join(problems)
        solution.error = f"{solution.error}; {note}" if solution.error else f"not recorded: {note}"
