"""What a committed full benchmark measured, as the demo quotes it: computed from the run's portable files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdoor.bench.measured import HEADLINE_RUN, describe, find_run, read_measured

REPO = Path(__file__).resolve().parents[2]


def _run_dir(tmp_path: Path, records: list[dict], baseline: str = "big") -> Path:
    run = tmp_path / HEADLINE_RUN
    run.mkdir(parents=True)
    rows = [{"name": n, "baseline": n == baseline} for n in ("big", "team", "cheap-team")]
    (run / "run.json").write_text(json.dumps({"config": {"suite": "toy", "rows": rows}}))
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def _rec(row: str, pid: str, passed: bool, compute: float) -> dict:
    return {"row": row, "problem_id": pid, "passed": passed, "compute": compute, "status": "done"}


def test_figures_count_only_problems_every_row_finished_and_ties_go_to_the_cheaper_row(tmp_path):
    records = [
        _rec("big", "p1", True, 1.0),
        _rec("big", "p2", False, 1.0),
        _rec("team", "p1", True, 3.0),
        _rec("team", "p2", True, 3.0),
        _rec("cheap-team", "p1", True, 2.0),
        _rec("cheap-team", "p2", True, 2.0),
        _rec("team", "p3", True, 3.0),  # only one row finished p3: not counted
        {**_rec("big", "p3", True, 1.0), "status": "error"},
    ]
    m = read_measured(_run_dir(tmp_path, records), tmp_path)
    assert m.problems == 2 and m.run == str(HEADLINE_RUN) and m.suite == "toy"
    assert (m.baseline.row, m.baseline.solved, m.baseline.compute) == ("big", 1, 2.0)
    assert (m.best.row, m.best.solved, m.best.compute) == ("cheap-team", 2, 4.0)
    text = describe(m)
    assert "cheap-team solved 2/2 against big's 1/2" in text and "2.00× its compute" in text


def test_the_run_is_found_above_the_working_directory_or_beside_the_package(tmp_path_factory):
    repo = tmp_path_factory.mktemp("checkout")
    run = _run_dir(repo, [_rec(r, "p1", True, 1.0) for r in ("big", "team", "cheap-team")])
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    assert find_run(deep, elsewhere / "pkg.py") == run
    assert find_run(elsewhere, repo / "src" / "memdoor" / "__init__.py") == run
    assert find_run(elsewhere, elsewhere / "pkg.py") is None


def test_the_committed_headline_run_is_quoted_from_its_own_results():
    run = REPO / HEADLINE_RUN
    if not (run / "results.jsonl").is_file():
        pytest.skip("the committed headline run is not in this checkout")
    m = read_measured(run, REPO)
    solved: dict[str, int] = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        solved[rec["row"]] = solved.get(rec["row"], 0) + bool(rec["passed"])
    assert m.problems == 164
    assert m.best.solved == max(solved.values()) and m.baseline.solved == solved[m.baseline.row]
    assert f"{m.best.solved}/164" in describe(m)
    # the bigger model given up to the best row's compute is quoted beside it (BENCHMARKS.md rows S–V)
    assert m.matched is not None and m.matched.compute <= m.best.compute
    assert m.matched.row.endswith("@" + m.baseline.row.partition("@")[2]) and m.matched.row != m.baseline.row
    assert f"alone ({m.matched.row}) solved {m.matched.solved}/164" in describe(m)


def test_the_bigger_model_alone_is_matched_at_no_more_compute_than_the_best_row(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    rows = ["single@B", "parallel:2@B", "adaptive:5@B", "team@A*4+B*1"]
    (run / "run.json").write_text(
        json.dumps(
            {"config": {"suite": "toy", "rows": [{"name": n, "baseline": n == "single@B"} for n in rows]}}
        )
    )
    figures = {
        "single@B": (1, 1.0),
        "parallel:2@B": (2, 2.0),
        "adaptive:5@B": (3, 5.0),
        "team@A*4+B*1": (4, 3.0),
    }
    records = [
        _rec(r, f"p{i}", i < solved, compute / 4)
        for r, (solved, compute) in figures.items()
        for i in range(4)
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    m = read_measured(run)
    assert m.best.row == "team@A*4+B*1"
    assert m.matched.row == "parallel:2@B"  # adaptive:5@B solved more but spent more than the team
    assert "B alone (parallel:2@B) solved 2/4, at 2.00× its compute" in describe(m)
