"""Slow tier: a team of real 0.5B agents (the embedded model) runs every strategy on easy problems.

It checks that each run completes with a graded Solution and a complete ledger, not that it passes:
quality is measured by benchmarks/strategies_quality.py, never claimed by a test. Short on purpose
(2 agents, 300 tokens per call, one round of review/refinement/repair) for 2-core CI machines.
"""

from __future__ import annotations

import asyncio

import pytest

from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.problems.load import find_problem, load_problems
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem

pytestmark = pytest.mark.slow

MODEL = "local:qwen2.5-coder-0.5b"
RUNS = [
    ("single", {}),
    ("parallel:2", {}),
    ("sequential:2", {"rounds": 1}),
    ("shared:2", {"rounds": 1, "stop_when_all_pass": False, "refine": "all"}),
    ("hybrid:2", {"repair_rounds": 1, "inputs": 3}),
]


@pytest.fixture(scope="module")
def pool(small_model):
    p = ModelPool()
    p.get(MODEL)
    yield p
    asyncio.run(p.aclose())


def check_complete(sol, config: SolveConfig) -> None:
    assert sol.error is None, sol.error
    assert sol.verdict is not None and isinstance(sol.passed, bool) and isinstance(sol.oracle, bool)
    assert sol.passed == sol.verdict.passed and (sol.oracle or not sol.passed)
    assert sol.stopped in ("done", "stalled", "rounds", "budget")
    assert sol.candidates and sol.code in [c.code for c in sol.candidates]
    totals = sol.ledger.totals()
    assert totals.calls == len(sol.ledger.calls) >= 1 and totals.failed_calls == 0
    assert totals.prompt_tokens > 0 and totals.completion_tokens > 0
    assert totals.model_seconds > 0 and sol.ledger.wall_seconds > 0
    for call in sol.ledger.calls:
        assert call.model == MODEL and call.agent in {a.split("=")[0] for a in sol.agents}
        assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.latency_s > 0
        assert call.completion_tokens <= config.max_tokens
    assert len(sol.agents) == config.strategy.agents


@pytest.mark.parametrize(("strategy", "options"), RUNS, ids=[r[0] for r in RUNS])
async def test_every_strategy_completes_on_humaneval(pool, sandbox, strategy, options):
    problem = find_problem(load_problems("humaneval"), "HumanEval/2")
    config = SolveConfig(
        strategy=StrategySpec.parse(strategy), models=[MODEL], max_tokens=300, options=options, seed=7
    )
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory())
    sol = await solve_problem(problem, config, env)
    check_complete(sol, config)
    kinds = {e["kind"] for e in await env.memory.entries(sol.trace_id, "timeline")}
    assert {"start", "draft", "graded"} <= kinds
    if strategy.startswith("sequential"):
        assert "review" in kinds or sol.stopped == "budget"


@pytest.mark.parametrize("strategy", ["parallel:2", "hybrid:2"])
async def test_a_leetcode_easy_problem(pool, sandbox, shared_data, strategy):
    problems = [p for p in load_problems(shared_data / "leetcode_2024_dev.jsonl") if p.difficulty == "easy"]
    options = dict(RUNS)[strategy]
    config = SolveConfig(
        strategy=StrategySpec.parse(strategy), models=[MODEL], max_tokens=300, options=options, seed=7
    )
    sol = await solve_problem(problems[0], config, RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory()))
    check_complete(sol, config)
    assert sol.verdict.tests_total >= len(problems[0].public_tests)
