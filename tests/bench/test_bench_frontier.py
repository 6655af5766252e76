"""The compute-matched verdict: every row against the best single-model row at no more compute, with the
paired test against that row, in the analysis, report.md, --json and the chart (a real results store
holding known results)."""

from __future__ import annotations

import json

import pytest
from bench_helpers import run_cli

from memdoor.agents.team import team_configs
from memdoor.bench.analysis import analyse
from memdoor.bench.config import BenchConfig, parse_rows, solve_config
from memdoor.bench.frontier import best_at_most, compute_matched, is_single_model
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.report import REPORT_MD, write_report
from memdoor.bench.stats import holm, mcnemar_exact
from memdoor.bench.store import ResultsStore

N = 40
SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"
S = f"single@{SMALL}"
P5 = f"parallel:5@{SMALL}"
P2 = f"parallel:2@{SMALL}"
B1 = f"single@{BIG}"
B3 = f"parallel:3@{BIG}"
TEAM = f"parallel:5@{BIG}*1+{SMALL}*4"
CASCADE = f"cascade:5@{BIG}*1+{SMALL}*4"
# row → (problems solved: the first k, compute per problem)
ROWS = {
    S: (10, 1e12),
    B1: (20, 3e12),
    TEAM: (30, 7e12),  # beats P5 (the best single-model row at ≤ 7e12): 8 wins, 0 losses
    B3: (30, 9e12),
    CASCADE: (20, 10e12),  # loses to B3 (the best at ≤ 1e13): 0 wins, 10 losses
    P5: (22, 5e12),  # the small model's own team: matched with the big model's rows only (B1, not P2)
    P2: (21, 2e12),  # beats B1 for less: on the frontier, and B1 is not
}


@pytest.fixture
def results_dir(tmp_path):
    config = BenchConfig(suite="suite.jsonl", rows=parse_rows(",".join(ROWS), [], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=N, versions={"memdoor": "0.1.0"})
    problems = [ProblemInfo(id=f"p{i:02d}", position=i, hidden_tests=3, public_tests=1) for i in range(N)]
    with ResultsStore.create_or_resume(tmp_path, run, problems) as store:
        for i in range(N):
            for row, (solved, compute) in ROWS.items():
                store.record(
                    ResultRecord(
                        problem_id=f"p{i:02d}",
                        row=row,
                        status="done",
                        passed=i < solved,
                        code="def f(): pass",
                        prompt_tokens=100,
                        completion_tokens=100,
                        compute=compute,
                        calls=1,
                        wall_seconds=1.0,
                        strategy_seconds=1.0,
                    )
                )
    return tmp_path


def test_every_row_is_compared_with_the_best_single_model_row_at_no_more_compute(results_dir):
    with ResultsStore.open(results_dir) as store:
        m = analyse(store, resamples=200).compute_matched
    assert m is not None and m.cost_axis == "compute" and m.biggest_model == BIG
    assert m.single_model_rows == [S, B1, B3, P5, P2]
    assert m.frontier == [S, P2, P5, B3]  # the single-model Pareto front, cheapest first
    match = {t.team: t.baseline for t in m.comparisons}
    # the big model's own rows are the reference, not compared; the 0.5B single has no other model's row
    # as cheap; the 0.5B team is matched with the 1.5B's rows, not with its own model's cheaper rows
    assert match == {TEAM: P5, CASCADE: B3, P5: B1}
    assert m.unmatched == [S, P2]
    by = {t.team: t for t in m.comparisons}
    assert (by[TEAM].pair.wins, by[TEAM].pair.losses) == (8, 0)
    assert (by[CASCADE].pair.wins, by[CASCADE].pair.losses) == (0, 10)
    assert by[TEAM].compute_ratio == pytest.approx(7 / 5)
    raw = [t.pair.p_value for t in m.comparisons]
    assert raw == [mcnemar_exact(t.pair.wins, t.pair.losses) for t in m.comparisons]
    assert [t.holm_p for t in m.comparisons] == holm(raw)  # corrected over these comparisons
    assert m.better == [TEAM] and m.worse == [CASCADE]  # the single model wins at no more compute


def test_ties_go_to_the_cheaper_row_and_a_row_is_never_its_own_match(results_dir):
    with ResultsStore.open(results_dir) as store:
        rows = {r.name: r for r in analyse(store, resamples=200).rows}
    b1 = rows[B1]
    twin = b1.model_copy(update={"name": "twin", "compute": b1.compute.model_copy(update={"mean": 2e12})})
    assert best_at_most(rows[TEAM], [b1, twin], "compute").name == "twin"
    assert best_at_most(b1, [b1], "compute") is None
    assert is_single_model([SMALL] * 5) and not is_single_model([BIG, SMALL])
    assert not is_single_model([SMALL, SMALL], ["python", "rust"])  # a mixed-language team is a team


def test_the_report_and_json_show_the_compute_matched_verdict(results_dir):
    done = run_cli("report", results_dir, "--json", "--resamples", "200")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)["compute_matched"]
    assert [(c["team"], c["baseline"]) for c in doc["comparisons"]] == [(TEAM, P5), (CASCADE, B3), (P5, B1)]
    assert doc["better"] == [TEAM] and doc["worse"] == [CASCADE] and doc["frontier"] == [S, P2, P5, B3]
    md = (results_dir / REPORT_MD).read_text()
    section = md.split("## Against the best single model at no more cost", 1)[1].split("\n## ", 1)[0]
    assert f"| {TEAM} | {P5} | 75.0% | 55.0% |" in section
    assert f"| {CASCADE} | {B3} | 50.0% | 75.0% |" in section
    assert f"The single model is better at no more cost: {CASCADE} (against {B3}, 0/10)" in section
    # the compute-matched verdict leads; the comparison with the baseline row as it is follows it
    assert md.index("## Against the best single model at no more cost") < md.index(
        "## Team vs the baseline row alone"
    )
    assert "Team vs bigger single model" not in md


def test_a_run_without_single_model_rows_has_no_compute_matched_verdict(tmp_path):
    config = BenchConfig(suite="s.jsonl", rows=parse_rows(TEAM, [], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=1)
    with ResultsStore.create_or_resume(tmp_path, run, [ProblemInfo(id="p", position=0)]) as store:
        store.record(ResultRecord(problem_id="p", row=TEAM, status="done", passed=True, code="x"))
    with ResultsStore.open(tmp_path) as store:
        a = analyse(store, resamples=100)
    assert a.compute_matched is None and a.summary()["compute_matched"] is None
    write_report(a, tmp_path)
    md = (tmp_path / REPORT_MD).read_text()
    assert "best single model at no more cost" not in md and "## Team vs bigger single model" in md


def test_the_bigger_model_alone_spending_more_draws_is_a_row_of_the_same_paired_bench():
    """``STRATEGY@MODEL`` rows of one model sit beside mixed teams in one bench; their first agent is the
    model's ``single`` agent (same model, temperature, seed, prompt variant), so its draft replays."""
    entries = [
        TEAM,
        f"parallel:3@{BIG}",
        f"hybrid:3[inputs=0,repair_when=none_pass,repairer=strong,repair_prompt=explain]@{BIG}",
        f"adaptive:5@{BIG}",
    ]
    config = BenchConfig(suite="s", rows=parse_rows(",".join(entries), [], [B1]))
    rows = {r.name: r for r in config.rows}
    assert [is_single_model(r.models, r.languages) for r in config.rows] == [False, True, True, True, True]

    def first_of(row, model):
        solve = solve_config(config, row)
        agents = team_configs(
            row.models,
            solve.strategy.agents,
            temperatures=solve.temperatures,
            seed=solve.seed,
            max_tokens=solve.max_tokens,
        )
        return next(a for a in agents if a.model == model).model_dump(exclude={"id"})

    single = first_of(rows[B1], BIG)
    assert all(first_of(r, BIG) == single for r in config.rows)


def test_without_model_sizes_only_mixed_teams_are_compared_on_tokens(results_dir):
    """A remote model of unknown size: no compute, no biggest model; the mixed teams still get a match, by
    tokens, and the single-model rows are the reference."""
    with ResultsStore.open(results_dir) as store:
        a = analyse(store, resamples=100)
    unknown = [r.model_copy(update={"compute": None}) for r in a.rows]
    pairs = {(p.a, p.b): p for p in a.pairs}
    m = compute_matched(unknown, {}, lambda x, y: pairs.get((x, y)) or pairs[(y, x)], lambda model: None)
    assert m is not None and m.cost_axis == "tokens" and m.biggest_model is None
    assert sorted(t.team for t in m.comparisons) == sorted([TEAM, CASCADE])
