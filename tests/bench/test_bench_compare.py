"""Comparing rows (memdoor.bench.compare): pairs on the common problems, each baseline's family corrected
on its own, and the per-group tables beside them (memdoor.bench.breakdown)."""

from __future__ import annotations

import pytest

from memdoor.bench.analysis import row_stats
from memdoor.bench.breakdown import breakdowns
from memdoor.bench.compare import pair_stats, team_vs_baselines, verdicts
from memdoor.bench.config import parse_rows
from memdoor.bench.records import ProblemInfo, ResultRecord
from memdoor.bench.rowstats import PairStats
from memdoor.bench.stats import holm

BASES = ["single@local:qwen2.5-coder-1.5b", "single@local:qwen2.5-coder-3b"]
ROWS = parse_rows("single,parallel:3,parallel:5", ["local:qwen2.5-coder-0.5b"], BASES)
P_VALUES = {"single": 0.01, "parallel:3": 0.02, "parallel:5": 0.04}


def result(problem: str, row: str, passed: bool, **extra) -> ResultRecord:
    fields = dict(
        status="done",
        passed=passed,
        code="",
        candidates=1,
        calls=1,
        failed_calls=0,
        prompt_tokens=1,
        completion_tokens=1,
        model_seconds=0.1,
        wall_seconds=0.1,
        strategy_seconds=0.1,
        trace_id="t",
        retryable=False,
        attempts=1,
        started_at="2024-01-01T00:00:00",
        finished_at="2024-01-01T00:00:01",
    )
    return ResultRecord(problem_id=problem, row=row, **{**fields, **extra})


def fake_pair(a: str, b: str) -> PairStats:
    p = P_VALUES[a] if b == BASES[0] else 1.0
    return PairStats(
        a=a, b=b, problems=10, a_solved=6, b_solved=3, wins=4, losses=1, both=2, neither=3,
        diff=0.3, diff_ci95=(0.1, 0.5), p_value=p,
    )  # fmt: skip


def test_each_baseline_is_corrected_for_its_own_teams_only():
    stats = [row_stats(r, []) for r in ROWS]
    vs = team_vs_baselines(ROWS, stats, fake_pair)
    assert [(t.team, t.baseline) for t in vs] == [(a, b) for b in BASES for a in P_VALUES]
    first = [t.holm_p for t in vs if t.baseline == BASES[0]]
    assert first == pytest.approx(holm(list(P_VALUES.values())))  # a family of 3, not all 6 comparisons
    assert first == pytest.approx([0.03, 0.04, 0.04])
    assert [t.holm_p for t in vs if t.baseline == BASES[1]] == [1.0, 1.0, 1.0]
    conclusions = verdicts(vs)
    assert [c.baseline for c in conclusions] == BASES
    assert conclusions[0].better == list(P_VALUES) and conclusions[1].better == []


def test_a_pair_counts_only_the_problems_both_rows_have():
    by_row = {
        "a": {"p0": result("p0", "a", True), "p1": result("p1", "a", True), "p2": result("p2", "a", False)},
        "b": {"p1": result("p1", "b", False), "p2": result("p2", "b", True), "p3": result("p3", "b", True)},
    }
    pair = pair_stats("a", "b", by_row, resamples=200)
    assert (pair.problems, pair.wins, pair.losses, pair.both, pair.neither) == (2, 1, 1, 0, 0)
    assert pair.diff == 0.0 and pair.p_value == 1.0
    assert pair_stats("a", "b", by_row, resamples=200) == pair  # seeded: the same results, the same numbers


def test_breakdowns_show_a_language_only_when_the_problems_differ_in_it():
    rows = ROWS[:1]
    python = [ProblemInfo(id="p0", position=0, difficulty="hard"), ProblemInfo(id="p1", position=1)]
    results = [result("p0", "single", True, oracle=True), result("p1", "single", False, oracle=False)]
    tables = breakdowns(python, rows, results)
    assert [b.by for b in tables] == ["difficulty"]
    hard, unknown = (tables[0].cells[g]["single"] for g in ("hard", "unknown"))
    assert (hard.solved, hard.total, hard.oracle, unknown.solved, unknown.oracle) == (1, 1, 1, 0, 0)
    mixed = [python[0], ProblemInfo(id="p1", position=1, language="javascript")]
    assert [b.by for b in breakdowns(mixed, rows, results)] == ["difficulty", "language"]
    assert breakdowns(python, rows, [result("p0", "single", True)])[0].cells["hard"]["single"].oracle is None
