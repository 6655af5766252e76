"""``memdoor solve --team best --budget-compute X``: the measured configuration that solved the most within
the budget, from the shipped measurement (made from a committed run) or the user's own bench directory
(real store, real CLI, scripted model)."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from bench_helpers import EXPECTED_SOLVED, run_cli

from memdoor.bench import portable
from memdoor.bench.analysis import analyse
from memdoor.bench.preset import (
    SHIPPED_RUNS,
    MeasuredRow,
    MeasuredRun,
    Measurement,
    against_single_model,
    build,
    choose,
    describe,
    from_directory,
    shipped,
    single_model_match,
)
from memdoor.bench.store import ResultsStore
from memdoor.commands.solve import build_config, configure
from memdoor.core.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"
MEASURED_BUDGET = "1e+15"  # the compute budget per problem the bench fixture measures its rows with


def row(name: str, models: list[str], solved: int, compute: float) -> MeasuredRow:
    return MeasuredRow(
        name=name,
        source="runs/x",
        strategy="single",
        models=models,
        solved=solved,
        total=10,
        compute_per_problem=compute,
    )


M = Measurement(
    suite="s",
    runs=[
        MeasuredRun(
            source="runs/x", created_at="t", problems_sha256="d", budget_compute=None, max_tokens=512, seed=0
        )
    ],
    rows=[
        row("small", [SMALL], 5, 1e12),
        row("big", [BIG], 7, 3e12),
        row("team", [BIG, SMALL], 8, 5e12),
        row("twin", [BIG, SMALL], 8, 4e12),  # as good as team for less
    ],
)


def test_the_most_solved_within_the_budget_ties_to_the_cheaper_among_the_models_you_have():
    anything = lambda models: True  # noqa: E731
    assert choose(M, 2e12, anything).name == "small"
    assert choose(M, 3e12, anything).name == "big"
    assert choose(M, 9e12, anything).name == "twin"
    assert choose(M, 9e12, lambda models: set(models) <= {SMALL}).name == "small"
    with pytest.raises(UsageError, match="the cheapest is small at 1e\\+12"):
        choose(M, 5e11, anything)
    with pytest.raises(UsageError, match="uses only models you have"):
        choose(M, 9e12, lambda models: False)
    stale_only = M.model_copy(update={"rows": [], "skipped": ["small (runs/x): no settings recorded"]})
    with pytest.raises(UsageError, match=r"runs today as it ran .*small \(runs/x\): no settings recorded"):
        choose(stale_only, 9e12, anything)


def test_a_chosen_team_is_set_against_the_best_single_model_row_at_no_more_compute_paired_by_problem():
    ids = [f"P/{i}" for i in range(10)]
    rows = {
        "small": row("small", [SMALL], 5, 1e12).model_copy(update={"solved_problems": ids[:5]}),
        "big": row("big", [BIG], 7, 3e12).model_copy(update={"solved_problems": ids[:7]}),
        "team": row("team", [BIG, SMALL], 9, 4e12).model_copy(update={"solved_problems": ids[1:10]}),
    }
    m = M.model_copy(update={"rows": list(rows.values())})
    anything = lambda models: True  # noqa: E731
    assert single_model_match(rows["team"], m, anything) is rows["big"]
    assert single_model_match(rows["team"], m, lambda models: set(models) <= {SMALL}) is rows["small"]
    assert single_model_match(rows["big"], m, anything) is None  # a single-model row is not matched
    cheap = rows["team"].model_copy(update={"compute_per_problem": 5e11})
    assert single_model_match(cheap, m, anything) is None  # none costs as little
    assert against_single_model(rows["team"], rows["big"]) == (
        "against the best single-model row at no more compute, big (7/10): 3 / 1 problems, exact McNemar "
        "p = 0.625, uncorrected: no significant difference"
    )
    line = describe(rows["team"], m, 4e12, anything).split("\n")
    assert line[0].startswith("team best at ≤ 4e+12 FLOPs per problem on average: team") and len(line) == 2
    assert "\n" not in describe(rows["big"], m, 4e12, anything)
    partial = rows["team"].model_copy(update={"solved_problems": None})
    assert against_single_model(partial, rows["big"]).endswith(
        "not paired (the measurement keeps no per-problem results of a partial row)"
    )
    fewer = rows["big"].model_copy(update={"total": 9})
    assert against_single_model(rows["team"], fewer).endswith("not paired (they ran on 10 and 9 problems)")


def test_the_single_model_match_ties_to_the_cheaper_then_the_earlier_and_a_one_model_mixed_language_team_is_a_team():
    a = row("a", [BIG], 7, 3e12)
    b = row("b", [BIG], 7, 2e12)  # as many solved, cheaper
    c = row("c", [BIG], 7, 2e12)  # the same again, later
    polyglot = row("polyglot", [BIG], 9, 4e12).model_copy(update={"languages": ["python", "javascript"]})
    m = M.model_copy(update={"rows": [a, b, c, polyglot]})
    anything = lambda models: True  # noqa: E731
    assert not polyglot.single_model and a.single_model  # as memdoor report counts them
    assert single_model_match(polyglot, m, anything) is b


def test_the_line_names_every_budget_the_chosen_row_runs_with():
    anything = lambda models: True  # noqa: E731
    capped = M.model_copy(
        update={"runs": [M.runs[0].model_copy(update={"budget_compute": 2.4e13, "budget_tokens": 12000})]}
    )
    line = describe(capped.rows[0], capped, 2e12, anything)
    assert "it runs as measured: a cap of 2.4e+13 FLOPs per problem and 12,000 tokens per problem" in line
    assert "it runs as measured: no compute cap, max 512 tokens per call" in describe(
        M.rows[0], M, 2e12, anything
    )


def test_the_shipped_team_rows_are_set_against_the_single_model_rows_the_tables_give():
    """HumanEval's mixed cascade is chosen from 2.33x its compute; the line beside it gives the paired test
    against the best single-model row at no more compute (BENCHMARKS.md, the report's rule: 9 / 2)."""
    m = shipped()
    anything = lambda models: True  # noqa: E731
    chosen = choose(m, 3.2e12, anything)
    assert chosen.name.startswith("cascade:5@")
    assert describe(chosen, m, 3.2e12, anything).split("\n")[1] == (
        "against the best single-model row at no more compute, adaptive:5 (119/164): 9 / 2 problems, exact "
        "McNemar p = 0.0654, uncorrected: no significant difference"
    )


def test_the_shipped_measurement_is_the_committed_runs_as_their_reports_give_them(tmp_path):
    """Rebuilt from the committed runs' portable files, it is the shipped file, row for row."""
    shipped_m = shipped()
    assert [r.source for r in shipped_m.runs] == [f"benchmarks/results/{n}" for n in SHIPPED_RUNS]
    directories = []
    for run in shipped_m.runs:
        source = REPO / run.source
        if not (source / portable.RESULTS_JSONL).is_file():
            pytest.skip(f"{run.source} is not in this checkout")
        copy = tmp_path / source.name
        copy.mkdir()
        for name in (portable.RUN_JSON, portable.RESULTS_JSONL, portable.CALLS_JSONL):
            shutil.copy(source / name, copy / name)
        directories.append((run.source, copy))
    assert build(directories) == shipped_m


def test_the_shipped_rows_run_as_today_s_code_runs_them():
    """The mixed teams come from the run whose mixed rows sampled by rank within their model, as today's
    code does (humaneval-v2's ran before, and are skipped); every row says its run."""
    m = shipped()
    by_name = {r.name: r for r in m.rows}
    mixed = [r for r in m.rows if len(set(r.models)) > 1]
    ranked = ("benchmarks/results/humaneval-ranked", "benchmarks/results/humaneval-matched")
    assert mixed and all(r.source in ranked for r in mixed)
    assert by_name[f"cascade:5@{BIG}*1+{SMALL}*4"].source == ranked[0]  # the earlier run wins a shared row
    # the 1.5B given the same compute: its own rows, so `--team best` can answer "give it to the 1.5B"
    assert (by_name[f"adaptive:5@{BIG}"].solved, by_name[f"adaptive:5@{BIG}"].source) == (126, ranked[1])
    cascade = by_name[f"cascade:2@{SMALL}*1+{BIG}*1"]
    assert (cascade.solved, cascade.total) == (116, 164)  # as BENCHMARKS.md gives it, not v2's 101
    assert any(
        s.startswith(f"cascade:2@{SMALL}*1+{BIG}*1 (benchmarks/results/humaneval-v2): settings")
        for s in m.skipped
    )
    assert len(by_name) == len(m.rows) and all(m.run_of(r) for r in m.rows)


@pytest.fixture
def measured(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    spec = f"scripted:{answers}"
    done = run_cli(
        "bench", problem_file, "--model", spec, "--strategies", "single,parallel:3", "--params", f"{spec}=1e9",
        "--budget-compute", MEASURED_BUDGET, "--max-tokens", "600", "--out", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_solve_with_the_best_team_of_your_own_bench_directory(measured, problem_file):
    out = measured
    with ResultsStore.open(out) as store:
        compute = {r.name: r.compute_per_problem for r in analyse(store, resamples=100).rows}
    budget = f"{compute['parallel:3'] * 1.01:g}"
    done = run_cli(
        "solve", problem_file, "--problem", "add", "--team", "best", "--budget-compute", budget,
        "--from", out, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    # both rows solved the same problems: the cheaper one is chosen, and the line says where from
    solved = len(EXPECTED_SOLVED)
    assert line.startswith(
        f"team best at ≤ {budget} FLOPs per problem on average: single — solved {solved}/6"
    )
    assert str(out) in line and f"it runs as measured: a cap of {MEASURED_BUDGET} FLOPs per problem" in line
    answer = json.loads(done.stdout)
    assert answer["passed"] is True and answer["strategy"] == "single"


def test_bad_preset_input_is_one_line(measured, problem_file):
    out = measured
    base = ["solve", problem_file, "--problem", "add", "--team", "best"]
    for extra, words in (
        ([], "needs --budget-compute"),
        (["--budget-compute", "1e3", "--from", str(out)], "costs that little"),
        (["--budget-compute", "1e15", "--strategy", "parallel:3"], "leave out --strategy"),
        (["--budget-compute", "1e15", "--from", str(out / "nope")], "no bench results"),
    ):
        done = run_cli(*base, *extra)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr
    alone = run_cli("solve", problem_file, "--problem", "add", "--from", str(out))
    assert alone.returncode == 2 and "--from DIR goes with --team best" in alone.stderr


def test_the_flags_team_best_cannot_take_are_refused_where_its_config_is_built():
    """build_config itself refuses them (not only the CLI), each flag named, before any measurement is read."""
    parser = argparse.ArgumentParser()
    configure(parser)
    base = ["p.jsonl", "--team", "best"]
    for extra, words in (
        ([], "--team best needs --budget-compute FLOPS"),
        (["--strategy", "parallel:3"], "leave out --strategy"),
        (["--agents", "3"], "leave out --agents"),
        (["--option", "rounds=2"], "leave out --option"),
        (["--languages", "python,rust"], "leave out --languages"),
        (
            ["--strategy", "vote", "--agents", "3", "--option", "k=1", "--languages", "python"],
            "leave out --strategy, --agents, --option, --languages",
        ),
    ):
        flags = extra if not extra else [*extra, "--budget-compute", "1e15", "--from", "/nonexistent"]
        with pytest.raises(UsageError) as e:
            build_config(parser.parse_args([*base, *flags]))
        assert words in str(e.value) and "\n" not in str(e.value)


def test_the_chosen_row_runs_with_the_budget_it_was_measured_with(measured, problem_file):
    """--budget-compute chooses the row by its mean compute; it is not then a per-problem cap the row was
    never measured under (a row whose mean is X spends more than X on some problems)."""
    parser = argparse.ArgumentParser()
    configure(parser)
    args = parser.parse_args(
        [
            str(problem_file),
            "--problem",
            "add",
            "--team",
            "best",
            "--budget-compute",
            "1e14",
            "--from",
            str(measured),
        ]
    )
    config = build_config(args)
    assert config.budget.compute == float(MEASURED_BUDGET) and config.max_tokens == 600  # the run's cap
    assert "it runs as measured" in args.preset_line


def test_rows_today_s_code_would_run_otherwise_are_left_out_of_a_committed_run(measured, tmp_path):
    """A run as committed (portable files only) is rebuilt, as memdoor report rebuilds it; a row whose
    recorded settings are not what today's code gives is skipped and named, not offered."""
    committed = tmp_path / "committed"
    committed.mkdir()
    for name in (portable.RUN_JSON, portable.RESULTS_JSONL, portable.CALLS_JSONL):
        shutil.copy(measured / name, committed / name)
    doc = json.loads((committed / portable.RUN_JSON).read_text())
    rows = doc["config"]["rows"]
    assert [r["name"] for r in rows] == ["single", "parallel:3"]
    rows[1]["settings"]["temperatures"] = [0.9]  # made under another rule than today's
    (committed / portable.RUN_JSON).write_text(json.dumps(doc))
    m = from_directory(str(committed))
    assert [r.name for r in m.rows] == ["single"]
    assert len(m.skipped) == 1 and m.skipped[0].startswith(f"parallel:3 ({committed}): settings now differ")
    assert "temperatures" in m.skipped[0]
    assert m.runs[0].budget_compute == float(MEASURED_BUDGET)
