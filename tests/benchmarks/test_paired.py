"""benchmarks/paired.py: the figures read from committed runs outside the tables (pairs, shared answers,
budgets), on small result files written here."""

from __future__ import annotations

import json

import paired
import pytest


def _run(tmp_path, name: str, rows: list[dict]) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(d)


def _r(row: str, n: int, passed: bool, code: str = "x", compute: float = 1.0, stopped: str = "done") -> dict:
    return {"row": row, "problem_id": f"P/{n}", "passed": passed, "code": code, "compute": compute,
            "stopped": stopped}  # fmt: skip


def test_pair_counts_wins_and_losses_on_the_problems_both_rows_have(tmp_path):
    a = _run(
        tmp_path,
        "a",
        [_r("t", 0, True), _r("t", 1, True), _r("t", 2, False), _r("t", 3, True), _r("u", 0, False)],
    )
    b = _run(tmp_path, "b", [_r("s", 0, False), _r("s", 1, True), _r("s", 2, True)])
    out = paired.pair(paired.load(a, "t"), paired.load(b, "s"))
    assert out.startswith("3 problems in both: A solved 2, B 2; A alone 1, B alone 1")
    assert out.endswith("p = 1")


def test_same_counts_identical_answers_and_what_the_differences_did(tmp_path):
    a = _run(tmp_path, "a", [_r("t", 0, True, "f"), _r("t", 1, False, "g"), _r("t", 2, True, "h")])
    b = _run(tmp_path, "b", [_r("t", 0, True, "f"), _r("t", 1, True, "g2"), _r("t", 2, True, "h")])
    assert paired.same(paired.load(a, "t"), paired.load(b, "t")) == (
        "3 problems in both: 2 answers the same, 1 differ; of those, B passes where A fails on 1, the reverse on 0"
    )


def test_over_counts_problems_above_a_budget_and_those_it_stopped(tmp_path):
    a = _run(tmp_path, "a", [_r("t", 0, True, compute=5), _r("t", 1, True, compute=12, stopped="budget"),
                             _r("t", 2, False, compute=11, stopped="stalled")])  # fmt: skip
    assert paired.over(paired.load(a, "t"), 10) == (
        "3 problems: spent more than 10 FLOPs on 2 (at most 1.20×); stopped by the budget on 1"
    )


def test_a_missing_run_or_row_is_one_line_and_exit_2(tmp_path, capsys):
    a = _run(tmp_path, "a", [_r("t", 0, True)])
    assert paired.main(["pair", a, "nope", a, "t"]) == 2
    assert paired.main(["over", str(tmp_path / "absent"), "t", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "has no row 'nope'" in err[0] and "no results.jsonl" in err[1]
    with pytest.raises(SystemExit):
        paired.main(["pair", a])
