"""``memdoor solve --team best`` chooses from the shipped measurement of the problem's language: HumanEval's for
Python, HumanEval-X JavaScript's for JavaScript, HumanEval's (saying so) for Rust; the JavaScript one is the
committed runs as their reports give them. No model runs: the solve stops once the team is chosen."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from memdoor.bench import preset
from memdoor.bench.preset import SHIPPED_JS_RUNS, build_shipped, shipped
from memdoor.commands import solve
from memdoor.core.errors import ResultsStoreError

REPO = Path(__file__).resolve().parents[2]
SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"
BUDGET = "2.5e12"


class Chosen(Exception):
    """Raised in place of solving: the configuration --team best chose."""


def chosen(monkeypatch, capsys, *argv: str) -> tuple[object, list[str]]:
    """The configuration ``memdoor solve ARGV --team best`` would run, with both models, and its stderr lines."""

    async def stop(problem, config, live, redis=None):
        raise Chosen(config)

    monkeypatch.setattr(solve, "_solve", stop)
    parser = argparse.ArgumentParser()
    solve.configure(parser)
    args = parser.parse_args(
        [*argv, "--team", "best", "--budget-compute", BUDGET, "--model", SMALL, "--model", BIG, "--no-live"]
    )
    with pytest.raises(Chosen) as stopped:
        solve.run(args)
    return stopped.value.args[0], capsys.readouterr().err.strip().splitlines()


def test_a_javascript_problem_gets_a_row_of_the_javascript_measurement_a_python_one_humaneval_s(
    monkeypatch, capsys
):
    """At 2.5e12 FLOPs the five 0.5B drafts and the vote (105 of 161) are the most JavaScript solved within
    it; a Python problem still gets HumanEval's adaptive:5 of the 0.5B, a row the JavaScript runs lack."""
    config, lines = chosen(monkeypatch, capsys, "humaneval-js", "--problem", "JavaScript/0")
    assert (config.strategy.name, config.strategy.agents, config.models) == ("parallel", 5, [SMALL])
    assert len(lines) == 1 and lines[0].startswith(
        f"team best at ≤ {float(BUDGET):g} FLOPs per problem on average: parallel:5 — solved 105/161 (65.2%)"
    )
    assert (
        " on humaneval-js, " in lines[0]
        and "(this one in benchmarks/results/humaneval-js-inputs," in lines[0]
    )
    assert config.budget.compute == 1.2e13  # the run's own budget, as measured

    config, lines = chosen(monkeypatch, capsys, "humaneval", "--problem", "HumanEval/0")
    assert (config.strategy.name, config.strategy.agents, config.models) == ("adaptive", 5, [SMALL])
    assert len(lines) == 1 and " on humaneval, " in lines[0]
    assert "(this one in benchmarks/results/humaneval-v2," in lines[0]


def test_a_rust_problem_gets_humaneval_s_row_saying_so(monkeypatch, capsys):
    config, lines = chosen(monkeypatch, capsys, "humaneval-rust", "--problem", "Rust/0")
    assert (config.strategy.name, config.models) == ("adaptive", [SMALL])
    assert lines[0] == "no measurement on Rust; using HumanEval's"
    assert len(lines) == 2 and " on humaneval, " in lines[1]


def test_the_javascript_measurement_is_the_committed_runs_as_their_reports_give_them(tmp_path):
    """Rebuilt from the committed runs' portable files, it is the shipped file, row for row; none of its rows
    is one today's code would run otherwise (stale)."""
    shipped_js = shipped("javascript")
    assert shipped_js.suite == "humaneval-js"
    assert [r.source for r in shipped_js.runs] == [f"benchmarks/results/{n}" for n in SHIPPED_JS_RUNS]
    assert shipped_js.skipped == []
    try:
        rebuilt = build_shipped("javascript", REPO, tmp_path)
    except ResultsStoreError as e:
        pytest.skip(str(e))
    assert rebuilt == shipped_js
    text = (Path(preset.__file__).parent / preset.SHIPPED_JS).read_text(encoding="utf-8")
    assert text == preset.shipped_text(rebuilt)  # byte for byte, as write_shipped writes it


def test_the_javascript_rows_are_those_benchmarks_md_gives():
    """The 1.5B given the team's compute is among them, so a user with only the 1.5B is answered from it."""
    m = shipped("javascript")
    by_name = {r.name: (r.solved, r.total, r.source.rsplit("/", 1)[1]) for r in m.rows}
    assert by_name[f"single@{BIG}"] == (96, 161, "humaneval-js-strong-repair")
    assert by_name["hybrid:5"] == (107, 161, "humaneval-js-inputs")  # inputs read as JavaScript
    assert by_name[f"cascade:5@{BIG}*1+{SMALL}*4"] == (111, 161, "humaneval-js-matched")
    assert by_name[f"parallel:2@{BIG}"] == (110, 161, "humaneval-js-matched")
    only_big = preset.choose(m, 5e12, lambda models: set(models) <= {BIG})
    assert only_big.name == f"adaptive:5@{BIG}" and only_big.solved == 119
