"""Analysis and report of a results directory with known results."""

from __future__ import annotations

import json
from datetime import date

import pytest

from memdoor.bench.analysis import PairStats, TeamVsSingle, analyse, verdicts
from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.report import REPORT_HTML, REPORT_MD, write_report
from memdoor.bench.stats import mcnemar_exact
from memdoor.bench.store import ResultsStore
from memdoor.core.errors import UsageError

N = 20
BASE = "single@local:qwen2.5-coder-1.5b"
# Which problems each row solves (problem i solved iff i in the set).
SOLVED = {
    "single": set(range(0, 8)),  # 8/20
    "parallel:5": set(range(0, 12)),  # 12/20: 4 wins over single, 0 losses
    BASE: set(range(2, 13)),  # 11/20
}
TOKENS = {"single": 100, "parallel:5": 600, BASE: 120}


def problems() -> list[ProblemInfo]:
    return [
        ProblemInfo(
            id=f"p{i:02d}",
            position=i,
            difficulty=("easy", "medium", "hard")[i % 3],
            platform="leetcode" if i < 10 else "atcoder",
            release_date=date(2024, 1 + i % 2, 10),
            hidden_tests=0 if i < 5 else 30,
            public_tests=0 if i in (3, 9, 16) else 2,
        )
        for i in range(N)
    ]


@pytest.fixture
def results_dir(tmp_path):
    config = BenchConfig(
        suite="suite.jsonl",
        rows=parse_rows("single,parallel:5", ["local:qwen2.5-coder-0.5b"], [BASE]),
        budget_tokens=4000,
    )
    run = RunRecord(config=config, problems_sha256="x", problem_count=N, versions={"memdoor": "0.1.0"})
    with ResultsStore.create_or_resume(tmp_path, run, problems()) as store:
        for i in range(N):
            for row, solved in SOLVED.items():
                store.record(
                    ResultRecord(
                        problem_id=f"p{i:02d}",
                        row=row,
                        status="error" if (row == "single" and i == 19) else "done",
                        passed=i in solved,
                        oracle=(i in solved) or (row == "parallel:5" and i < 15),
                        code=f"def f(): return {i}",
                        prompt_tokens=TOKENS[row] // 2,
                        completion_tokens=TOKENS[row] // 2 + i,
                        calls=5 if row == "parallel:5" else 1,
                        wall_seconds=2.0,
                        strategy_seconds=1.0 + i,
                        stopped="budget" if (row == "parallel:5" and i % 4 == 0) else "done",
                    )
                )
    return tmp_path


def test_analysis_numbers_match_the_stored_results(results_dir):
    with ResultsStore.open(results_dir) as store:
        a = analyse(store, resamples=2000)
    single, team, base = a.row("single"), a.row("parallel:5"), a.row(BASE)
    assert (single.solved, single.total, single.errors) == (8, 20, 1)
    assert team.pass_at_1 == pytest.approx(0.6) and base.pass_at_1 == pytest.approx(0.55)
    assert single.ci95 == pytest.approx((0.2188, 0.6134), abs=1e-4)  # Wilson score interval of 8/20
    assert team.oracle_solved == 15 and team.oracle_rate == pytest.approx(0.75)
    assert single.oracle_rate == pytest.approx(0.4)  # the oracle is at least what was selected
    assert team.tokens.mean == pytest.approx(600 + 9.5) and team.calls.median == 5
    assert team.seconds.mean == pytest.approx(10.5)  # the strategy's own wall time when known
    assert team.budget_stops == 5 and team.usd is None
    assert a.complete and a.problems_total == N

    pair = next(p for p in a.pairs if (p.a, p.b) == ("single", "parallel:5"))
    assert (pair.wins, pair.losses, pair.both, pair.neither) == (0, 4, 8, 8)
    assert pair.p_value == pytest.approx(mcnemar_exact(0, 4)) == pytest.approx(0.125)
    assert pair.diff == pytest.approx(-0.2)
    assert len(a.pairs) == 3

    assert sorted((t.team, t.baseline) for t in a.team_vs_single) == [("parallel:5", BASE), ("single", BASE)]
    t = next(t for t in a.team_vs_single if t.team == "parallel:5")
    # parallel solves 0..11, the baseline 2..12: 2 wins (0, 1), 1 loss (12).
    assert (t.pair.wins, t.pair.losses) == (2, 1) and t.pair.p_value == pytest.approx(1.0)
    assert t.token_ratio == pytest.approx(609.5 / 129.5)
    assert t.holm_p == 1.0
    lone = next(t for t in a.team_vs_single if t.team == "single")  # 2 wins, 5 losses: the smaller p, ×2
    assert lone.holm_p == pytest.approx(2 * mcnemar_exact(2, 5)) and lone.holm_p < 1
    [v] = a.verdicts  # parallel:5 is ahead (2/1) but costs more; single is behind
    assert (v.baseline, v.comparisons, v.better, v.better_uncorrected) == (BASE, 2, [], [])
    assert v.cheapest_better is None and v.as_good_for_less == []

    diff = next(b for b in a.breakdowns if b.by == "difficulty")
    assert diff.groups == ["easy", "medium", "hard"]
    easy = [i for i in range(N) if i % 3 == 0]
    assert diff.cells["easy"]["single"].total == len(easy)
    assert diff.cells["easy"]["single"].solved == len([i for i in easy if i < 8])
    # the team made a passing candidate on 0..14 and chose one on 0..11; single's oracle is what it solved
    assert diff.cells["easy"]["parallel:5"].oracle == len([i for i in easy if i < 15])
    assert diff.cells["easy"]["parallel:5"].solved == len([i for i in easy if i < 12])
    assert diff.cells["easy"]["single"].oracle == diff.cells["easy"]["single"].solved
    months = next(b for b in a.breakdowns if b.by == "release month")
    assert months.groups == ["2024-01", "2024-02"]
    examples = next(b for b in a.breakdowns if b.by == "public tests")  # 3, 9 and 16 have none
    assert examples.groups == ["with", "without"]
    assert [(examples.cells["without"][r].solved, examples.cells["without"][r].total) for r in SOLVED] == [
        (1, 3),  # single solves 0-7: problem 3 only
        (2, 3),  # parallel:5 solves 0-11
        (2, 3),  # the 1.5B solves 2-12
    ]
    # Pareto: single is cheapest; the baseline costs a little more and is more accurate; the team most.
    assert a.pareto == ["single", BASE, "parallel:5"]


def test_report_files_hold_the_numbers_and_the_json_summary_has_the_documented_shape(results_dir):
    with ResultsStore.open(results_dir) as store:
        a = analyse(store, resamples=2000)
    paths = write_report(a, results_dir)
    names = {p.name for p in paths}
    assert {REPORT_MD, REPORT_HTML, "pareto.png", "pass_at_1.png", "by_difficulty.png"} <= names
    for p in paths:
        assert p.stat().st_size > 0
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (results_dir / REPORT_MD).read_text()
    html = (results_dir / REPORT_HTML).read_text()
    lo, hi = a.row("parallel:5").ci95
    for text in (md, html):
        assert "60.0%" in text and "40.0%" in text and "55.0%" in text
        assert f"[{100 * lo:.1f}, {100 * hi:.1f}]" in text
        assert "Equal budget" in text and "4,000 tokens" in text
        assert "Team vs the baseline row alone" in text and BASE in text
        assert "0.125" in text  # single vs parallel:5, McNemar
        assert "Holm p" in text and "no team is significantly better" in text
        assert "unpriced" in text
        assert "Caution: 5 of 20 problems have no hidden tests" in text
        assert "parallel:5 vs single@local:qwen2.5-coder-1.5b on 20 problems: +5.0 points" in text
        assert "75.0%" in text  # the team's oracle ceiling
        assert "2024-02" in text and "atcoder" in text
        assert "Selected / oracle by difficulty" in text
    gap = md.split("Selected / oracle by difficulty")[1].split("##")[0]
    assert "| difficulty | parallel:5 |" in gap  # only the row whose choice lost a passing candidate
    easy = [i for i in range(N) if i % 3 == 0]
    chosen, ceiling = len([i for i in easy if i < 12]), len([i for i in easy if i < 15])
    assert f"| easy | {chosen} / {ceiling} of {len(easy)} |" in gap
    assert html.startswith("<!DOCTYPE html>") and '<img src="pareto.png"' in html

    doc = json.loads(json.dumps(a.summary()))
    row = doc["strategies"]["parallel:5"]
    assert set(row) >= {
        "solved",
        "total",
        "pass_at_1",
        "ci95",
        "tokens_per_problem",
        "seconds_per_problem",
        "usd_per_problem",
    }
    assert (row["solved"], row["total"], row["usd_per_problem"]) == (12, 20, None)
    assert row["ci95"] == [pytest.approx(lo), pytest.approx(hi)]
    assert list(doc["strategies"]) == ["single", "parallel:5", BASE]
    assert doc["budget_tokens"] == 4000 and doc["complete"] is True
    assert doc["problems_without_hidden_tests"] == 5


def test_an_incomplete_run_is_reported_as_such(tmp_path):
    config = BenchConfig(suite="s", rows=parse_rows("single,parallel:2", ["local:qwen2.5-coder-0.5b"], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=N)
    with ResultsStore.create_or_resume(tmp_path, run, problems()) as store:
        store.record(ResultRecord(problem_id="p00", row="single", status="done", passed=True, usd=0.002))
        store.record(ResultRecord(problem_id="p01", row="single", status="done", passed=False, usd=0.004))
    with ResultsStore.open(tmp_path) as store:
        a = analyse(store, resamples=500)
    assert not a.complete
    assert a.row("parallel:2").total == 0 and a.row("parallel:2").pass_at_1 is None
    assert a.row("single").usd.mean == pytest.approx(0.003)
    write_report(a, tmp_path)
    md = (tmp_path / REPORT_MD).read_text()
    assert "INCOMPLETE" in md and "2 of 40 results stored" in md and "No token budget" in md
    doc = a.summary()
    assert doc["strategies"]["parallel:2"]["pass_at_1"] is None
    assert doc["strategies"]["parallel:2"]["tokens_per_problem"] is None  # NaN becomes null
    assert doc["strategies"]["single"]["usd_per_problem"] == pytest.approx(0.003)


def test_an_interrupted_run_compares_rows_on_the_problems_every_row_finished(tmp_path):
    """Killed mid-problem: single finished p00-p02, parallel:2 only p00-p01. Rows are compared on p00-p01,
    so the row that got further is not scored on a problem the other has not done yet."""
    config = BenchConfig(suite="s", rows=parse_rows("single,parallel:2", ["local:qwen2.5-coder-0.5b"], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=N)
    with ResultsStore.create_or_resume(tmp_path, run, problems()) as store:
        for i, row in [(0, "single"), (0, "parallel:2"), (1, "single"), (1, "parallel:2"), (2, "single")]:
            store.record(
                ResultRecord(problem_id=f"p{i:02d}", row=row, status="done", passed=i < 2 or row == "single")
            )
    with ResultsStore.open(tmp_path) as store:
        a = analyse(store, resamples=500)
    assert not a.complete and a.problems_compared == 2 and a.results_stored == 5
    assert a.row("single").total == 2 and a.row("single").solved == 2
    assert a.row("parallel:2").total == 2 and a.row("parallel:2").pass_at_1 == 1.0
    write_report(a, tmp_path)
    md = (tmp_path / REPORT_MD).read_text()
    assert "5 of 40 results stored" in md and "covers the 2 problems with a result in every row" in md
    assert "1 results of unfinished problems are left out" in md
    assert a.summary()["problems_compared"] == 2


def test_pass_at_1_is_broken_down_by_language_when_the_answers_span_several(tmp_path):
    infos = [
        ProblemInfo(id=f"p{i}", position=i, language=("python", "javascript", "rust")[i % 3])
        for i in range(6)
    ]
    config = BenchConfig(suite="s", rows=parse_rows("single", ["local:qwen2.5-coder-0.5b"], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=6)
    with ResultsStore.create_or_resume(tmp_path, run, infos) as store:
        for i in range(6):  # python p0 p3 both solved, javascript p1 solved, rust none
            store.record(ResultRecord(problem_id=f"p{i}", row="single", status="done", passed=i in (0, 1, 3)))
    with ResultsStore.open(tmp_path) as store:
        a = analyse(store, resamples=200)
    doc = a.summary()
    assert doc["languages"] == {"python": 2, "javascript": 2, "rust": 2}
    cells = doc["breakdowns"]["language"]
    assert {g: (c["single"]["solved"], c["single"]["total"]) for g, c in cells.items()} == {
        "javascript": (1, 2),
        "python": (2, 2),
        "rust": (0, 2),
    }
    write_report(a, tmp_path)
    assert "Answers in JavaScript (2), Python (2), Rust (2)." in (tmp_path / REPORT_MD).read_text()


def test_a_one_language_run_says_its_language_without_a_breakdown(results_dir):
    with ResultsStore.open(results_dir) as store:
        a = analyse(store, resamples=200)
    assert "language" not in a.summary()["breakdowns"] and a.languages == {"python": N}
    write_report(a, results_dir)
    assert "Answers in Python." in (results_dir / REPORT_MD).read_text()


def test_a_row_added_later_can_be_left_out_until_it_catches_up(tmp_path):
    """single finished p00-p02; parallel:2, added to the run later, only p00: the whole report compares on
    p00; --rows single reports single on all three. A row the run does not have is a usage error."""
    config = BenchConfig(suite="s", rows=parse_rows("single,parallel:2", ["local:qwen2.5-coder-0.5b"], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=N)
    with ResultsStore.create_or_resume(tmp_path, run, problems()) as store:
        for i, row in [(0, "single"), (1, "single"), (2, "single"), (0, "parallel:2")]:
            store.record(ResultRecord(problem_id=f"p{i:02d}", row=row, status="done", passed=i != 1))
    with ResultsStore.open(tmp_path) as store:
        whole = analyse(store, resamples=200)
        only = analyse(store, resamples=200, only_rows=["single"])
        with pytest.raises(UsageError, match=r"no row 'hybrid:5'.*its rows: single, parallel:2"):
            analyse(store, resamples=200, only_rows=["hybrid:5"])
    assert whole.problems_compared == 1 and whole.row("single").total == 1
    assert [r.name for r in only.rows] == ["single"]
    assert only.row("single").total == 3 and only.row("single").solved == 2


def vs(
    team: str, wins: int, losses: int, p: float, compute: float | None, tokens: float = 2.0
) -> TeamVsSingle:
    pair = PairStats(
        a=team,
        b="big",
        problems=40,
        a_solved=30 + wins - losses,
        b_solved=30,
        wins=wins,
        losses=losses,
        both=30 - losses,
        neither=10 - wins,
        diff=(wins - losses) / 40,
        diff_ci95=(None, None),
        p_value=p,
    )
    return TeamVsSingle(
        team=team, baseline="big", pair=pair, token_ratio=tokens, compute_ratio=compute, seconds_ratio=1.0
    )


def test_the_verdict_corrects_for_every_comparison_and_names_the_cheapest_team():
    family = [
        vs("wide", 12, 0, 0.0005, 6.0),  # better even after Holm (×4 = 0.002)
        vs("narrow", 9, 0, 0.004, 3.0),  # ×3 = 0.012: better, and cheaper than wide
        vs("lucky", 6, 0, 0.031, 2.0),  # ×2 = 0.062: significant only uncorrected
        vs("cascade", 3, 2, 1.0, 0.66),  # no better, but as good for less compute
    ]
    ps = [0.002, 0.012, 0.062, 1.0]
    family = [t.model_copy(update={"holm_p": p}) for t, p in zip(family, ps, strict=True)]
    [v] = verdicts(family)
    assert v.comparisons == 4
    assert v.better == ["narrow", "wide"] and v.cheapest_better == "narrow"  # cheapest first
    assert v.better_uncorrected == ["lucky", "narrow", "wide"]
    assert v.as_good_for_less == ["cascade"]
    # A team whose model size is unknown is costed in tokens.
    [v] = verdicts([vs("remote", 3, 1, 0.6, None, tokens=0.5)])
    assert v.as_good_for_less == ["remote"] and v.better == []
