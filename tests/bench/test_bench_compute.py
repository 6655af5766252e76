"""Compute across model sizes: FLOPs ≈ 2 × parameters × tokens per call, an equal compute budget per
row, per-row teams and the ratios of the report (scripted models, real runner, sandbox and store)."""

from __future__ import annotations

import io

import pytest
from bench_helpers import ALL_FUNCTIONS

from memdoor.bench.analysis import analyse
from memdoor.bench.config import BenchConfig, parse_params, parse_rows
from memdoor.bench.loop import run_bench
from memdoor.bench.progress import PlainProgress
from memdoor.bench.records import ProblemInfo, RunRecord
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import problems_digest
from memdoor.core.budget import Budget, BudgetTracker
from memdoor.core.errors import BudgetExceeded, UsageError
from memdoor.memory import open_memory
from memdoor.models.catalog import parameters_of
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.problems.load import load_problems
from memdoor.run.env import RunEnv

SMALL, BIG = "scripted:small", "scripted:big"
SIZES = {SMALL: 1e9, BIG: 4e9}


async def bench(tmp_path, problem_file, sandbox, strategies, baselines=(), **config):
    problems = load_problems(problem_file)
    cfg = BenchConfig(
        suite=str(problem_file), rows=parse_rows(strategies, [SMALL], list(baselines)), params=SIZES, **config
    )
    record = RunRecord(config=cfg, problems_sha256=problems_digest(problems), problem_count=len(problems))
    pool = ModelPool()
    for spec in SIZES:
        pool.add(spec, ScriptedModel([ALL_FUNCTIONS], spec=spec))
    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    with ResultsStore.create_or_resume(tmp_path / "out", record, infos) as store:
        await run_bench(
            problems,
            cfg,
            store,
            lambda: RunEnv(pool=pool, sandbox=sandbox, memory=open_memory(None)),
            progress=PlainProgress(io.StringIO()),
        )
        return store.results(full=True), analyse(store, resamples=200, usd_per_gpu_hour=3.6)


def test_parameters_come_from_the_catalog_or_are_given():
    assert parameters_of("local:qwen2.5-coder-0.5b") == 0.49e9
    assert parameters_of("local:qwen2.5-coder-1.5b?ctx=8192") == 1.54e9
    assert parameters_of("openai:qwen@http://h:8000/v1") is None
    assert parameters_of("openai:qwen@http://h:8000/v1", {"qwen": 7e9}) == 7e9
    assert parse_params(["openai:q@http://h/v1=7e9"]) == {"openai:q@http://h/v1": 7e9}
    for bad in ("7e9", "x=0", "x=nan", "x=big"):
        with pytest.raises(UsageError, match="bad --params"):
            parse_params([bad])


def test_a_compute_budget_caps_calls_like_the_token_budget():
    t = BudgetTracker(Budget(compute=2e9 * 300))
    cap, held = t.reserve(100, 1024, flops_per_token=2e9)
    assert cap == 200 and held == 300  # only 200 completion tokens fit next to the 100-token prompt
    with pytest.raises(BudgetExceeded, match="compute"):
        t.reserve(100, 1024, flops_per_token=2e9)  # the first call holds it all
    t.release(held, 2e9)
    t.charge(250, compute=2e9 * 250)
    with pytest.raises(BudgetExceeded, match="compute"):
        t.reserve(40, 1024, flops_per_token=2e9)  # 50 tokens left: a 40-token prompt leaves 10
    t.charge(50, compute=2e9 * 50)
    assert t.exhausted() is not None and t.exhausted().what == "compute"


async def test_each_row_is_charged_the_compute_of_its_own_teams_models(tmp_path, problem_file, sandbox):
    strategies = f"parallel:3,parallel:3@{BIG}*1+{SMALL}*2"
    results, analysis = await bench(tmp_path, problem_file, sandbox, strategies, baselines=[f"single@{BIG}"])
    for r in results:
        ledger = __import__("json").loads(r.ledger_json)
        expected = sum(
            2 * SIZES[c["model"]] * (c["prompt_tokens"] + c["completion_tokens"]) for c in ledger["calls"]
        )
        assert r.compute == pytest.approx(expected) and r.compute > 0
    mixed = analysis.row(f"parallel:3@{BIG}*1+{SMALL}*2")
    assert mixed.models == [BIG, SMALL, SMALL] and mixed.team == f"1× {BIG} + 2× {SMALL}"
    # an agent samples by its rank among its model's agents: the mixed team's agents 1 and 2 are
    # parallel:3's agents 0 and 1 (the small model), its agent 0 is the baseline's only agent (the big
    # one). Per problem 7 calls are charged, 4 computed.
    assert analysis.calls_charged == 6 * 7 and analysis.calls_made == 6 * 4
    vs = next(t for t in analysis.team_vs_single if t.team == "parallel:3")
    small, big = analysis.row("parallel:3"), analysis.row(f"single@{BIG}")
    assert vs.compute_ratio == pytest.approx(small.compute_per_problem / big.compute_per_problem)
    doc = analysis.summary()
    row = doc["strategies"]["parallel:3"]
    assert row["compute_per_problem"] == pytest.approx(small.compute_per_problem)
    assert row["seconds_per_problem"] == small.seconds_per_problem
    assert row["hardware_usd_per_problem"] == pytest.approx(3.6 * small.seconds_per_problem / 3600)
    assert doc["cost_axis"] == "compute"


async def test_an_equal_compute_budget_stops_every_row_within_it(tmp_path, problem_file, sandbox):
    budget = 2 * SIZES[SMALL] * 250  # room for one scripted call (about 130 tokens), not three
    results, analysis = await bench(
        tmp_path, problem_file, sandbox, "single,parallel:3", budget_compute=budget, max_tokens=1024
    )
    assert all(r.compute <= budget for r in results)
    parallel = [r for r in results if r.row == "parallel:3"]
    assert all(r.stopped == "budget" and r.candidates < 3 for r in parallel), [
        (r.stopped, r.candidates, r.compute, r.tokens) for r in results
    ]
    assert analysis.row("single").budget_stops == 0
