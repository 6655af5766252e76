"""The bench loop: every (problem, row) pair not yet stored is solved by the runner and stored at once.

A stored result is ``error`` (counted as a failed problem everywhere) when the run did not finish
normally: the runner reports it stopped on an error (``Solution.stopped == "error"``), every model
call failed for good (the endpoint was down: the ledger records failed calls only for ``ModelError``),
or the runner itself raised. Otherwise it is ``done``, whatever the verdict.

Resume rules (what a rerun of the same command does):

- a pair with a stored ``done`` result is never run again;
- a pair with no stored result (the run was killed while it ran, or never reached it) runs;
- a pair stored as ``error`` is retried automatically when the error was environmental — every model
  call failed for good, or the run failed with (or the runner raised) a :class:`ModelError`,
  :class:`SandboxError`, :class:`MemoryStoreError` or ``OSError`` — decided by type, never by message:
  the runner keeps the type on the Solution (``error_class``; ``error_type`` in the store) — up to
  :data:`MAX_AUTO_ATTEMPTS` attempts in all; any other error is presumed deterministic and kept, so it
  is not looped on. ``retry_errors`` (``--retry-errors``) retries every stored error once more.

Errors count as failed problems in every statistic.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memdoor.bench.config import BenchConfig, RowSpec, solve_config
from memdoor.bench.draws import Draws, paired_pool
from memdoor.bench.progress import PlainProgress, Progress, Scoreboard
from memdoor.bench.records import ResultRecord
from memdoor.bench.scaling import Draft
from memdoor.bench.store import ResultsStore, now_iso
from memdoor.core.errors import MemdoorError, MemoryStoreError, ModelError, SandboxError, qualified_name
from memdoor.core.problem import Problem
from memdoor.core.solution import Solution
from memdoor.run.tracestore import TraceRecord
from memdoor.select.behaviour import behaviour_key, group_by_key

if TYPE_CHECKING:
    from memdoor.core.messages import ModelResponse
    from memdoor.run.config import SolveConfig
    from memdoor.run.env import RunEnv

MAX_AUTO_ATTEMPTS = 3
"""Attempts in all (first run included) for a pair whose error was environmental."""

RETRYABLE: tuple[type[BaseException], ...] = (ModelError, SandboxError, MemoryStoreError, OSError)
"""Error types counted as environmental (retried on resume), by type, never by message."""

Solve = Callable[[Problem, "SolveConfig", "RunEnv"], Awaitable[Solution]]


class BenchAborted(MemdoorError):
    """Too many environmental errors in a row (an endpoint down, a broken sandbox): the run stopped.

    Everything finished is stored; rerunning the command resumes and retries the errored pairs.
    """


@dataclass
class BenchOptions:
    """How a bench runs (none of it changes results, so none of it is part of the run's identity)."""

    concurrency: int = 1
    """(problem, row) pairs solved at once."""
    retry_errors: bool = False
    """Retry every stored error, not only environmental ones."""
    max_consecutive_errors: int = 10
    """Stop after this many environmental errors in a row."""
    pace_replays: bool = True
    """A replayed call takes its recorded latency (see :mod:`memdoor.bench.draws`), so every row's wall
    seconds are as if it had run alone."""
    calls_from: Mapping[str, tuple[str, ModelResponse]] | None = None
    """Calls an earlier run computed, adopted when asked for again (``--calls-from``)."""
    raw_specs: Mapping[str, str] | None = None
    """The raw form of each model spec the config shows without its secrets (shown → raw:
    :func:`memdoor.bench.config.hide_secrets`), kept in memory only: the models are opened from it."""


@dataclass
class BenchJob:
    """One pair to run."""

    problem: Problem
    row: RowSpec
    previous: ResultRecord | None = None
    """The stored error this job retries, if any."""


@dataclass
class BenchOutcome:
    """What one invocation did."""

    planned: int
    ran: int
    skipped: int
    errors: int


def should_retry(stored: ResultRecord, retry_errors: bool) -> bool:
    """Whether a stored result is run again (see the module docstring)."""
    if stored.status != "error":
        return False
    return retry_errors or (stored.retryable and stored.attempts < MAX_AUTO_ATTEMPTS)


def plan_jobs(
    problems: Sequence[Problem],
    rows: Sequence[RowSpec],
    stored: dict[tuple[str, str], ResultRecord],
    *,
    retry_errors: bool = False,
) -> list[BenchJob]:
    """Pairs to run, problem by problem (so paired comparisons fill in evenly), rows in order."""
    jobs = []
    for p in problems:
        for row in rows:
            prev = stored.get((p.id, row.name))
            if prev is None or should_retry(prev, retry_errors):
                jobs.append(BenchJob(p, row, prev))
    return jobs


def result_from_solution(
    problem: Problem,
    row: RowSpec,
    solution: Solution,
    trace: dict | str | None,
    *,
    started: str,
    seconds: float,
) -> ResultRecord:
    r = solution.record()
    totals, verdict = r.totals, r.verdict
    endpoint_down = totals.calls > 0 and totals.failed_calls == totals.calls
    failed = r.stopped == "error" or endpoint_down
    kind = solution.error_class
    return ResultRecord(
        problem_id=problem.id,
        row=row.name,
        status="error" if failed else "done",
        passed=bool(r.passed) and not failed,
        oracle=r.oracle,
        code=r.code,
        verdict_status=verdict.status if verdict else None,
        tests_passed=verdict.tests_passed if verdict else None,
        tests_total=verdict.tests_total if verdict else None,
        candidates=len(r.candidates),
        confidence=r.confidence,
        stopped=r.stopped,
        calls=totals.calls,
        failed_calls=totals.failed_calls,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        usd=totals.usd,
        compute=totals.compute,
        model_seconds=totals.model_seconds,
        wall_seconds=seconds,
        strategy_seconds=totals.wall_seconds,
        trace_id=r.trace_id,
        error=r.error or ("every model call failed" if endpoint_down else None),
        error_type=r.error_type,
        retryable=endpoint_down or (kind is not None and issubclass(kind, RETRYABLE)),
        started_at=started,
        finished_at=now_iso(),
        signals=None if (sig := solution.signals()) is None else sig.model_dump_json(),
        verdict_json=solution.verdict.model_dump_json() if solution.verdict else None,
        ledger_json=solution.ledger.model_dump_json(),
        trace_path=trace if isinstance(trace, str) else None,
        trace_json=json.dumps(trace) if isinstance(trace, dict) else None,
        solution_json=solution.model_dump_json(exclude={"verdict", "ledger"}),
    )


def draft_records(problem: Problem, solution: Solution) -> str | None:
    """The drafts a parallel team's selector chose from, as :class:`Draft` JSON (for scaling curves);
    None when the run's grading stage did not grade them (``RunEnv.grade_drafts``).

    Each draft's correctness is its grading on the hidden tests (``Solution.draft_verdicts``), done after
    the team answered, for the report only; nothing of it reaches any agent or selector."""
    verdicts = solution.draft_verdicts
    if not solution.candidates or verdicts is None:
        return None
    kinds = [t.kind for t in problem.public_tests]
    keys = []
    for c in solution.candidates:
        results = c.public.tests if c.public is not None else []
        if not problem.public_tests:
            keys.append(())
        elif len(results) == len(kinds):
            keys.append(behaviour_key(results, kinds))
        else:
            keys.append((c.code.strip(),))
    group_of = {i: gi for gi, g in enumerate(group_by_key(keys)) for i in g}
    drafts = []
    for i, (c, verdict) in enumerate(zip(solution.candidates, verdicts, strict=True)):
        code = c.code.strip()
        drafts.append(
            Draft(
                agent=c.agent,
                empty=not code,
                public_passed=(c.public.passed if c.public is not None else False)
                if problem.public_tests
                else None,
                tests_passed=c.public.tests_passed if c.public is not None else 0,
                group=group_of[i],
                logprob=c.mean_logprob,
                correct=bool(code) and verdict is not None and verdict.passed,
            ).model_dump()
        )
    return json.dumps(drafts, separators=(",", ":"))


def wants_drafts(row: RowSpec) -> bool:
    """Whether a row's results keep draft records (a parallel team's: its scaling curves)."""
    return row.strategy.startswith("parallel:")


def result_from_error(
    problem: Problem, row: RowSpec, error: Exception, *, started: str, seconds: float
) -> ResultRecord:
    kind = type(error)
    return ResultRecord(
        problem_id=problem.id,
        row=row.name,
        status="error",
        passed=False,
        error=f"{kind.__name__}: {error}",
        error_type=qualified_name(kind),
        retryable=isinstance(error, RETRYABLE),
        wall_seconds=seconds,
        started_at=started,
        finished_at=now_iso(),
    )


def trace_location(rec: TraceRecord, path: Path | None) -> dict | str:
    """Where a run's trace is kept with its result: the trace file the runner wrote (relative to its
    folder's parent, the results directory), else the trace record itself (events + final answer)."""
    if path is not None:
        return f"{path.parent.name}/{path.name}"
    return rec.model_dump(mode="json")


def _first_error(group: BaseExceptionGroup) -> BaseException:
    """The error to report from a failed task group: a MemdoorError if any (one clear line), else the first."""
    flat = []
    stack: list[BaseException] = [group]
    while stack:
        e = stack.pop(0)
        if isinstance(e, BaseExceptionGroup):
            stack[:0] = list(e.exceptions)
        else:
            flat.append(e)
    return next((e for e in flat if isinstance(e, MemdoorError)), flat[0])


async def run_bench(
    problems: Sequence[Problem],
    config: BenchConfig,
    store: ResultsStore,
    make_env: Callable[[], RunEnv],
    *,
    options: BenchOptions | None = None,
    progress: Progress | None = None,
    solve: Solve | None = None,
    draws: Draws | None = None,
) -> BenchOutcome:
    """Run every pending pair, storing each result the moment it finishes.

    ``make_env`` gives a fresh runner environment per pair (its own team memory; models and sandbox
    shared). ``solve`` defaults to :func:`memdoor.run.solve.solve_problem`. Every pair's model calls go
    through the run's :class:`Draws` (paired draws: an identical request is computed once per run and
    kept in the store); ``draws`` defaults to one over the calls the store keeps.
    """
    options = options or BenchOptions()
    progress = progress or PlainProgress()
    if solve is None:
        from memdoor.run.solve import solve_problem as solve
    stored = store.statuses()
    if draws is None:
        draws = Draws(store.calls(), store.save_call, pace=options.pace_replays, donor=options.calls_from)
    jobs = plan_jobs(problems, config.rows, stored, retry_errors=options.retry_errors)
    total = len(problems) * len(config.rows)
    board = Scoreboard(config.row_names, list(stored.values()))
    configs = {row.name: solve_config(config, row) for row in config.rows}
    outcome = BenchOutcome(planned=len(jobs), ran=0, skipped=total - len(jobs), errors=0)
    consecutive = 0
    pending = iter(jobs)

    async def run_one(job: BenchJob) -> None:
        nonlocal consecutive
        recorded: list[dict | str] = []  # the run's trace record, handed over as it is saved
        shared = make_env()
        env = dataclasses.replace(
            shared,
            pool=paired_pool(shared.pool, job.row.models, draws, options.raw_specs),
            grade_drafts=wants_drafts(job.row),
            on_record=lambda rec, path: recorded.append(trace_location(rec, path)),
        )
        started, t0 = now_iso(), time.monotonic()
        try:
            try:
                solution = await solve(job.problem, configs[job.row.name], env)
            except Exception as e:
                result = result_from_error(
                    job.problem, job.row, e, started=started, seconds=time.monotonic() - t0
                )
            else:
                seconds = time.monotonic() - t0
                trace = recorded[-1] if recorded else None
                result = result_from_solution(
                    job.problem, job.row, solution, trace, started=started, seconds=seconds
                )
                if result.status == "done":
                    result.drafts = draft_records(job.problem, solution)
        finally:
            await env.memory.aclose()
        if job.previous is not None:
            result.attempts = job.previous.attempts + 1
        store.record(result)
        outcome.ran += 1
        outcome.errors += result.status == "error"
        board.add(result, job.previous)
        progress.advance(result)
        consecutive = consecutive + 1 if result.retryable else 0
        if consecutive >= options.max_consecutive_errors:
            raise BenchAborted(
                f"stopped after {consecutive} environmental errors in a row (last: {result.error}); "
                "finished results are stored — fix the cause and rerun the same command to resume"
            )

    async def worker() -> None:
        for job in pending:
            await run_one(job)

    progress.start(total, total - len(jobs), board)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(options.concurrency, len(jobs)))):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:
        raise _first_error(group_error) from None
    finally:
        progress.close()
    return outcome
