"""From stored results to the numbers a report shows: per-row rates and costs, the paired comparisons
(:mod:`memdoor.bench.compare`), the breakdowns and problem table (:mod:`memdoor.bench.breakdown`), the
Pareto front and the team-versus-bigger-model table, gathered in one :class:`Analysis`.

Conventions: one sample per (problem, row), so pass@1 is solved / total; a stored error counts as a
failed problem; rows are compared only on the problems both have results for; a pass rate's interval
is Wilson's, a difference's a paired bootstrap, seeded (:data:`REPORT_SEED`), so the same results
always give the same report.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from memdoor.bench import calibrate
from memdoor.bench.breakdown import Breakdown, ProblemRow, breakdowns, per_problem
from memdoor.bench.compare import REPORT_SEED, Conclusion, pair_stats, team_vs_baselines, verdicts
from memdoor.bench.config import RowSpec
from memdoor.bench.frontier import ComputeMatched, compute_matched
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.rowstats import PairStats, RowStats, TeamVsSingle
from memdoor.bench.scaling import Draft, scaling_curve
from memdoor.bench.serving import ServingEstimate, ServingSetup, estimate
from memdoor.bench.stats import RESAMPLES, pareto_front, spread, wilson_ci
from memdoor.bench.store import ResultsStore
from memdoor.core.errors import UsageError
from memdoor.models.catalog import parameters_of
from memdoor.select.calibration import Calibration

AXES = ("compute", "tokens", "seconds", "usd")
"""Cost axes of the cost–accuracy chart and front (``memdoor report --axis``)."""
AXIS_LABELS = {
    "compute": "compute per problem (FLOPs ≈ 2 × parameters × tokens, mean)",
    "tokens": "tokens per problem (prompt + completion, mean)",
    "seconds": "seconds per problem (the team's wall time, mean)",
    "usd": "dollars per problem (mean)",
}


class Analysis(BaseModel):
    """Everything a report shows."""

    directory: str
    run: RunRecord
    problems_total: int = Field(description="Problems selected for the run.")
    public_only: int = Field(
        default=0, description="Problems without hidden tests (graded on the public tests agents saw)."
    )
    languages: dict[str, int] = Field(
        default_factory=dict, description="Problems per language the answers are written in."
    )
    per_problem: list[ProblemRow] = Field(
        default_factory=list, description="Each problem's result in every row, in problem order."
    )
    calibration: Calibration | None = Field(
        default=None,
        description="The estimate of an answer being correct fitted on this run, with its out-of-fold "
        "quality (None: too few results with signals).",
    )
    rows: list[RowStats]
    pairs: list[PairStats]
    team_vs_single: list[TeamVsSingle]
    verdicts: list[Conclusion] = Field(default_factory=list, description="The plain answer per baseline.")
    compute_matched: ComputeMatched | None = Field(
        default=None,
        description="Each row against the best single-model row at no more than its cost (memdoor.bench."
        "frontier; None: no single-model row).",
    )
    breakdowns: list[Breakdown]
    pareto: list[str] = Field(description="Rows on the cost–accuracy front (cost on ``axis`` vs pass@1).")
    axis: str = Field(default="tokens", description="Cost axis of the front and chart (see AXES).")
    calls_made: int = Field(default=0, description="Model calls the run computed (each once: paired draws).")
    calls_charged: int = Field(
        default=0, description="Successful model calls charged to rows (a shared call counts in every row)."
    )
    compute_made: float | None = Field(
        default=None, description="FLOPs the run computed (None: unknown size)."
    )
    engine_seconds_made: float = Field(
        default=0.0, description="Engine seconds of the calls the run computed."
    )
    usd_per_gpu_hour: float | None = Field(
        default=None, description="Rented hardware price given to the report ($/GPU-hour), or None."
    )
    serving: ServingEstimate | None = Field(
        default=None, description="Dollars and latency on the serving setup given with --serving, or None."
    )
    complete: bool = Field(description="Every (problem, row) pair has a result.")
    results_stored: int = Field(default=0, description="Results in the store (every row, every problem).")
    problems_compared: int | None = Field(
        default=None,
        description="On an incomplete run, the problems with a result in every row: every number covers "
        "only these, so rows are compared on the same problems (None: the run is complete, or no problem "
        "has a result in every row yet, and the numbers cover the stored results).",
    )
    resamples: int = Field(description="Bootstrap resamples.")
    seed: int = Field(description="Bootstrap seed.")

    def row(self, name: str) -> RowStats:
        return next(r for r in self.rows if r.name == name)

    def hardware_usd(self, r: RowStats) -> float | None:
        """Dollars per problem of rented hardware: $/GPU-hour × the row's seconds per problem."""
        if self.usd_per_gpu_hour is None or math.isnan(r.seconds.mean):
            return None
        return self.usd_per_gpu_hour * r.seconds.mean / 3600

    def summary(self) -> dict[str, Any]:
        """The ``memdoor report --json`` document (NaN written as null)."""
        strategies = {}
        for r in self.rows:
            strategies[r.name] = {
                "solved": r.solved,
                "total": r.total,
                "pass_at_1": r.pass_at_1,
                "ci95": list(r.ci95),
                "tokens_per_problem": r.tokens_per_problem,
                "seconds_per_problem": r.seconds_per_problem,
                "usd_per_problem": r.usd_per_problem,
                "compute_per_problem": r.compute_per_problem,
                "engine_seconds_per_problem": None if r.engine_seconds is None else r.engine_seconds.mean,
                "hardware_usd_per_problem": self.hardware_usd(r),
                "team": r.team,
                "calls_per_problem": r.calls.mean,
                "errors": r.errors,
                "oracle_solved": r.oracle_solved,
                "oracle_rate": r.oracle_rate,
                "strategy": r.strategy,
                "models": r.models,
                "baseline": r.baseline,
            }
            if r.scaling is not None:
                strategies[r.name]["scaling"] = r.scaling
        doc = {
            "strategies": strategies,
            "pairs": [p.model_dump(mode="json") for p in self.pairs],
            "team_vs_single": [t.model_dump(mode="json") for t in self.team_vs_single],
            "verdicts": [v.model_dump(mode="json") for v in self.verdicts],
            "compute_matched": None
            if self.compute_matched is None
            else self.compute_matched.model_dump(mode="json"),
            "serving": None if self.serving is None else self.serving.model_dump(mode="json"),
            "breakdowns": {b.by: b.model_dump(mode="json")["cells"] for b in self.breakdowns},
            "pareto_front": self.pareto,
            "cost_axis": self.axis,
            "problems": self.problems_total,
            "problems_without_hidden_tests": self.public_only,
            "languages": self.languages,
            "calibration": None
            if self.calibration is None
            else self.calibration.model_dump(mode="json", include={"fitted_on", "out_of_fold"}),
            "complete": self.complete,
            "problems_compared": self.problems_compared,
            "budget_tokens": self.run.config.budget_tokens,
            "bootstrap": {"resamples": self.resamples, "seed": self.seed},
            "run": {
                "suite": self.run.config.suite,
                "config": self.run.config.model_dump(mode="json"),
                "versions": self.run.versions,
                "created_at": self.run.created_at,
                "calls_made": self.calls_made,
                "calls_charged": self.calls_charged,
                "compute_made": self.compute_made,
                "engine_seconds_made": self.engine_seconds_made,
            },
        }
        return _no_nan(doc)


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    return value


def _ci(passed: Sequence[float]) -> tuple[float | None, float | None]:
    if not passed:
        return (None, None)
    return wilson_ci(int(sum(passed)), len(passed))


def row_scaling(row: RowSpec, results: Sequence[ResultRecord]) -> dict[str, dict[str, float]] | None:
    """The scaling curve of a parallel row from its stored drafts (None for other rows, or none stored)."""
    name, _, count = row.strategy.partition(":")
    if name != "parallel" or not count.isdigit() or not any(r.drafts for r in results):
        return None
    per_problem = [
        [Draft.model_validate(d) for d in json.loads(r.drafts)] if r.drafts else [] for r in results
    ]
    return scaling_curve(per_problem, int(count))


def row_stats(row: RowSpec, results: Sequence[ResultRecord]) -> RowStats:
    passed = [float(r.passed) for r in results]
    total = len(results)
    oracle_known = any(r.oracle is not None for r in results)
    oracle_solved = sum(bool(r.oracle) or r.passed for r in results) if oracle_known else None
    priced = total > 0 and all(r.usd is not None or r.tokens == 0 for r in results)
    computed = total > 0 and all(r.compute is not None or r.tokens == 0 for r in results)
    return RowStats(
        name=row.name,
        strategy=row.strategy,
        models=row.models,
        baseline=row.baseline,
        solved=int(sum(passed)),
        total=total,
        errors=sum(r.status == "error" for r in results),
        pass_at_1=sum(passed) / total if total else None,
        ci95=_ci(passed),
        oracle_solved=oracle_solved,
        oracle_rate=oracle_solved / total if oracle_solved is not None and total else None,
        tokens=spread([float(r.tokens) for r in results]),
        calls=spread([float(r.calls) for r in results]),
        seconds=spread([r.seconds for r in results]),
        usd=spread([r.usd or 0.0 for r in results]) if priced else None,
        team=row.team,
        compute=spread([r.compute or 0.0 for r in results]) if computed else None,
        engine_seconds=spread([r.model_seconds for r in results]),
        scaling=row_scaling(row, results),
        budget_stops=sum(r.stopped == "budget" for r in results),
    )


def analyse(
    store: ResultsStore,
    *,
    resamples: int = RESAMPLES,
    axis: str = "compute",
    usd_per_gpu_hour: float | None = None,
    only_rows: Sequence[str] | None = None,
    serving: ServingSetup | None = None,
) -> Analysis:
    """All report numbers for a results directory (complete or not); ``only_rows``: just those rows (an
    unfinished run compares its rows on the problems all of them finished, so leaving out a row added
    later keeps the others' comparison on all of theirs); ``serving``: a setup to price the rows on
    (memdoor.bench.serving). UsageError for a row the run does not have."""
    run = store.run()
    rows = store.rows()
    if only_rows is not None:
        names = [r.name for r in rows]
        unknown = [n for n in only_rows if n not in names]
        if unknown:
            raise UsageError(
                f"no row {', '.join(map(repr, unknown))} in this run; its rows: {', '.join(names)}"
            )
        rows = [r for r in rows if r.name in set(only_rows)]
    problems = store.problems()
    results = [r for r in store.results() if only_rows is None or r.row in set(only_rows)]
    analysis = analyse_results(
        str(store.directory), run, rows, problems, results, resamples=resamples, axis=axis
    )
    made = store.call_models()
    compute: float | None = 0.0
    for spec, response in made:
        size = parameters_of(spec, run.config.params)
        u = response.usage
        compute = (
            None
            if size is None or compute is None
            else compute + 2 * size * (u.prompt_tokens + u.completion_tokens)
        )
    graded_hidden = {p.id for p in problems if p.hidden_tests}  # elsewhere passing IS the public tests
    analysis.calibration = calibrate.fit(
        [r for r in results if r.problem_id in graded_hidden],
        rows,
        fitted_on=f"{run.config.suite} ({', '.join(r.name for r in rows)})",
    )
    analysis.calls_made = len(made)
    analysis.compute_made = compute if made else None
    analysis.engine_seconds_made = sum(r.usage.latency_s for _, r in made)
    analysis.usd_per_gpu_hour = usd_per_gpu_hour
    if serving is not None:
        analysis.serving = estimate(analysis.rows, serving, lambda m: parameters_of(m, run.config.params))
    return analysis


def analyse_results(
    directory: str,
    run: RunRecord,
    rows: Sequence[RowSpec],
    problems: Sequence[ProblemInfo],
    results: Sequence[ResultRecord],
    *,
    resamples: int = RESAMPLES,
    axis: str = "tokens",
) -> Analysis:
    stored = len(results)
    charged = sum(r.calls - r.failed_calls for r in results)
    problems_table = per_problem(problems, results, Path(directory))
    done = [{res.problem_id for res in results if res.row == r.name} for r in rows]
    complete = all(d >= {p.id for p in problems} for d in done)
    # an interrupted run finishes problems row by row: compare the rows on those every row finished
    compared = None if complete or not done else set.intersection(*done)
    if compared:
        results = [res for res in results if res.problem_id in compared]
    by_row: dict[str, dict[str, ResultRecord]] = {r.name: {} for r in rows}
    for res in results:
        if res.row in by_row:
            by_row[res.row][res.problem_id] = res
    stats = [row_stats(r, list(by_row[r.name].values())) for r in rows]
    names = [r.name for r in rows]
    pairs = [pair_stats(a, b, by_row, resamples=resamples) for a, b in combinations(names, 2)]
    pair_of = {(p.a, p.b): p for p in pairs}

    def pair(a: str, b: str) -> PairStats:
        return pair_of.get((a, b)) or pair_stats(a, b, by_row, resamples=resamples)

    vs = team_vs_baselines(rows, stats, pair)
    matched = compute_matched(
        stats,
        {r.name: r.languages for r in rows},
        pair,
        lambda model: parameters_of(model, run.config.params),
    )
    if any(s.cost(axis) is None for s in stats if s.pass_at_1 is not None):
        axis = "tokens"  # some row's cost is unknown on that axis (a model of unknown size, unpriced)
    scored = [s for s in stats if s.pass_at_1 is not None]
    front = pareto_front([(s.cost(axis) or 0.0, s.pass_at_1) for s in scored])
    return Analysis(
        directory=directory,
        run=run,
        problems_total=len(problems),
        public_only=sum(p.hidden_tests == 0 for p in problems),
        languages=dict(Counter(p.language for p in problems)),
        per_problem=problems_table,
        rows=stats,
        pairs=pairs,
        team_vs_single=vs,
        verdicts=verdicts(vs),
        compute_matched=matched,
        breakdowns=breakdowns(problems, rows, results),
        pareto=[scored[i].name for i in front],
        axis=axis,
        calls_charged=charged,
        complete=complete,
        results_stored=stored,
        problems_compared=len(compared) if compared else None,
        resamples=resamples,
        seed=REPORT_SEED,
    )
