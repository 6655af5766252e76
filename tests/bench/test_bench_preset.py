"""``memdoor solve --team best --budget-compute X``: the measured configuration that solved the most within
the budget, from the shipped measurement (made from a committed run) or the user's own bench directory
(real store, real CLI, scripted model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench_helpers import EXPECTED_SOLVED, run_cli

from memdoor.bench import portable
from memdoor.bench.analysis import analyse
from memdoor.bench.preset import MeasuredRow, Measurement, choose, measurement, shipped
from memdoor.bench.records import ProblemInfo
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import select_problems
from memdoor.core.errors import UsageError
from memdoor.problems.load import load_problems

REPO = Path(__file__).resolve().parents[2]
SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"


def row(name: str, models: list[str], solved: int, compute: float) -> MeasuredRow:
    return MeasuredRow(
        name=name, strategy="single", models=models, solved=solved, total=10, compute_per_problem=compute
    )


M = Measurement(
    source="runs/x",
    suite="s",
    created_at="t",
    budget_compute=None,
    max_tokens=512,
    seed=0,
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


def test_the_shipped_measurement_is_the_committed_run_as_its_report_gives_it(tmp_path):
    shipped_m = shipped()
    source = REPO / shipped_m.source
    if not (source / portable.RESULTS_JSONL).is_file():
        pytest.skip(f"{shipped_m.source} is not in this checkout")
    for name in (portable.RUN_JSON, portable.RESULTS_JSONL, portable.CALLS_JSONL):
        shutil.copy(source / name, tmp_path / name)
    run = portable.read_run(tmp_path)
    problems = select_problems(load_problems(run.config.suite), run.config.filters)
    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    with ResultsStore.create_or_resume(tmp_path, run, infos):
        pass
    with ResultsStore.open(tmp_path) as store:
        again = measurement(analyse(store, resamples=100), shipped_m.source)
    assert again == shipped_m


@pytest.fixture
def measured(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    spec = f"scripted:{answers}"
    done = run_cli(
        "bench", problem_file, "--model", spec, "--strategies", "single,parallel:3", "--params", f"{spec}=1e9",
        "--out", out,
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
    assert line.startswith(f"team best at ≤ {budget} FLOPs per problem: single — solved {solved}/6")
    assert str(out) in line
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
