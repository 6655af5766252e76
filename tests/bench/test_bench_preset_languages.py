"""``memdoor solve --team best`` chooses from the shipped measurement of the problem's language: HumanEval's
for Python, HumanEval-X JavaScript's for JavaScript, HumanEval-X Rust's for Rust (HumanEval's, saying so, when
it has no row of the user's models); each is the committed runs as their reports give them. No model runs:
the solve stops once the team is chosen."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from memdoor.bench import preset
from memdoor.bench.preset import PRESETS, build_shipped, shipped
from memdoor.commands import solve
from memdoor.core.errors import ResultsStoreError, UsageError

REPO = Path(__file__).resolve().parents[2]
SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"
BUDGET = "2.5e12"


class Chosen(Exception):
    """Raised in place of solving: the configuration --team best chose."""


def chosen(
    monkeypatch, capsys, *argv: str, budget: str = BUDGET, models: tuple[str, ...] = (SMALL, BIG)
) -> tuple[object, list[str]]:
    """The configuration ``memdoor solve ARGV --team best`` would run with ``models`` (default both) within
    ``budget``, and its stderr lines."""

    async def stop(problem, config, live, redis=None):
        raise Chosen(config)

    monkeypatch.setattr(solve, "_solve", stop)
    parser = argparse.ArgumentParser()
    solve.configure(parser)
    args = parser.parse_args(
        [*argv, "--team", "best", "--budget-compute", budget, *(f"--model={m}" for m in models), "--no-live"]
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


def test_a_problem_from_another_platform_is_told_the_measurement_is_not_of_its_suite(
    monkeypatch, capsys, problem_file
):
    """A LeetCode problem (the user file says so) gets HumanEval's row, on a line of its own saying the
    measurement was made on HumanEval, not on problems like it; a HumanEval problem gets no such line."""
    config, lines = chosen(monkeypatch, capsys, str(problem_file), "--problem", "add")
    assert (config.strategy.name, config.models) == ("adaptive", [SMALL])
    assert lines[0] == (
        "measured on HumanEval, not on leetcode problems like this one: a row's lead there may not carry over "
        "(bench your own problems with memdoor bench and choose with --from DIR)"
    )
    assert lines[1].startswith("team best at ≤ ") and len(lines) == 2
    _, lines = chosen(monkeypatch, capsys, "humaneval", "--problem", "HumanEval/0")
    assert not any(line.startswith("measured on") for line in lines)


def test_a_rust_problem_gets_a_row_of_the_rust_measurement_where_the_1_5b_alone_wins(monkeypatch, capsys):
    """In Rust the 1.5B given more draws beats the mixed cascade at less compute (63 against 54), so with both
    models the choice is one 1.5B draw at 2.5e12 and its two draws and the vote from 2.77e12 — where a Python
    problem gets a team (HumanEval's adaptive:5 of the 0.5B at 2.5e12)."""
    config, lines = chosen(monkeypatch, capsys, "humaneval-rust", "--problem", "Rust/0")
    assert (config.strategy.name, config.strategy.agents, config.models) == ("single", 1, [BIG])
    assert len(lines) == 1 and " on humaneval-rust, " in lines[0]
    assert "(this one in benchmarks/results/humaneval-rust-matched," in lines[0]
    # from 3.42e12 the cascade fits the budget too, and loses to the 1.5B's own rows at every budget
    for budget, strategy in (("3e12", "parallel:2"), ("4e12", "parallel:2"), ("4.5e12", "parallel:3")):
        config, lines = chosen(monkeypatch, capsys, "humaneval-rust", "--problem", "Rust/0", budget=budget)
        assert config.models == [BIG] and f"{config.strategy.name}:{config.strategy.agents}" == strategy, (
            lines
        )
    config, lines = chosen(monkeypatch, capsys, "humaneval-rust", "--problem", "Rust/0", budget="1e13")
    assert lines[0].startswith(
        "team best at ≤ 1e+13 FLOPs per problem on average: adaptive:5@local:qwen2.5-coder-1.5b — solved 70/163"
    )
    assert config.budget.compute == 2.4e13  # the run's own budget, as measured


def test_a_rust_problem_with_only_the_0_5b_gets_humaneval_s_row_saying_so(monkeypatch, capsys):
    """Rust's measurement has no row of the 0.5B alone: HumanEval's answers, and the first line says so."""
    config, lines = chosen(monkeypatch, capsys, "humaneval-rust", "--problem", "Rust/0", models=(SMALL,))
    assert (config.strategy.name, config.models) == ("adaptive", [SMALL])
    assert lines[0] == "no measurement with the models you have on Rust; using HumanEval's"
    assert len(lines) == 2 and " on humaneval, " in lines[1]


def test_below_every_row_of_its_language_the_error_names_that_language_s_cheapest_row():
    """A budget under Rust's cheapest row (one 1.5B draw, 1.31e12) is not answered from HumanEval's; and a
    JavaScript problem with models no measurement has keeps its own suite in the error."""
    both = lambda models: set(models) <= {SMALL, BIG}  # noqa: E731
    m, note = preset.shipped_for("rust", both)
    assert (m.suite, note) == ("humaneval-rust", None)
    with pytest.raises(
        UsageError, match=r"humaneval-rust-matched costs that little; the cheapest is single@"
    ):
        preset.choose(m, 1e12, both)
    remote = lambda models: set(models) <= {"openai:gpt-x@http://127.0.0.1:9/v1"}  # noqa: E731
    m, note = preset.shipped_for("javascript", remote)
    assert (m.suite, note) == ("humaneval-js", None)
    with pytest.raises(UsageError, match="humaneval-js-matched uses only models you have"):
        preset.choose(m, 1e13, remote)


@pytest.mark.parametrize("language, suite", [("javascript", "humaneval-js"), ("rust", "humaneval-rust")])
def test_each_language_s_measurement_is_the_committed_runs_as_their_reports_give_them(
    tmp_path, language, suite
):
    """Rebuilt from the committed runs' portable files, it is the shipped file, row for row; none of its rows
    is one today's code would run otherwise (stale)."""
    file, runs = PRESETS[language]
    m = shipped(language)
    assert m.suite == suite
    assert [r.source for r in m.runs] == [f"benchmarks/results/{n}" for n in runs]
    assert m.skipped == []
    try:
        rebuilt = build_shipped(language, REPO, tmp_path)
    except ResultsStoreError as e:
        pytest.skip(str(e))
    assert rebuilt == m
    text = (Path(preset.__file__).parent / file).read_text(encoding="utf-8")
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


def test_the_rust_rows_are_those_benchmarks_md_gives():
    m = shipped("rust")
    by_name = {r.name: (r.solved, r.total) for r in m.rows}
    assert by_name == {
        f"single@{BIG}": (54, 163),
        f"cascade:5@{BIG}*1+{SMALL}*4": (54, 163),
        f"parallel:2@{BIG}": (63, 163),
        f"parallel:3@{BIG}": (68, 163),
        f"adaptive:5@{BIG}": (70, 163),
    }
