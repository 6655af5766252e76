"""Solving one problem with a team: build the team, run the strategy on the public view, grade outside.

The one entry point others call (``memdoor solve``, the bench, the worker, the server)::

    async with open_env() as env:
        solution = await solve_problem(problem, SolveConfig(strategy=StrategySpec.parse("parallel:5")), env)

:func:`solve_problem` never loses a run: whatever happens inside the strategy, it returns a
:class:`Solution` carrying the ledger, the trace id and, when something broke, ``error``; the final
answer and the config are written to memory (and the trace to ``env.trace_dir``) in ``finally``
(:mod:`memdoor.run.record`). Hidden tests are used only after the strategy returned, to grade
(:mod:`memdoor.run.grade`, each distinct program once): the chosen code (``verdict``/``passed``), the
distinct candidates (``oracle``) and, when ``env.grade_drafts`` asks, each candidate
(``draft_verdicts``). The config is :mod:`memdoor.run.config`'s, the environment :mod:`memdoor.run.env`'s.
"""

from __future__ import annotations

import contextlib
import time

from memdoor.agents.team import Agent, Team, team_configs
from memdoor.core.budget import BudgetTracker
from memdoor.core.errors import BudgetExceeded, MemdoorError
from memdoor.core.ledger import Ledger
from memdoor.core.problem import Problem
from memdoor.core.solution import Solution
from memdoor.core.trace import Trace
from memdoor.judging.judge import Judge
from memdoor.models.catalog import parameters_of
from memdoor.models.pool import ModelPool
from memdoor.problems.languages import check_mixable
from memdoor.run.config import SolveConfig
from memdoor.run.env import RunEnv
from memdoor.run.grade import estimate, grade_run
from memdoor.run.record import record
from memdoor.strategies.context import RunContext
from memdoor.strategies.naming import NAMING_TOKENS, name_function
from memdoor.strategies.testgen import TEST_WRITING_TOKENS, write_tests


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
        await ctx.event("start", None, problem=problem.id, strategy=label, config=config.shown())
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
        graded = await grade_run(problem, solution, ctx, judge, drafts=env.grade_drafts)
        graded.apply(solution)
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
