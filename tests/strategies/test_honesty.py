"""The honesty rule: hidden tests grade the final answer and never reach a strategy.

A problem whose hidden tests carry a unique marker string runs through the real runner with every
strategy (every role: draft, review, revise, refine, repair, inputs). No prompt sent to any model, no
memory entry, no trace event and no saved trace file may contain the marker; yet the final answer is
graded on the hidden tests.
"""

from __future__ import annotations

import json

import pytest
from strategy_helpers import ByRole, fenced

from memdoor.core.errors import UsageError
from memdoor.core.problem import Problem, TestCase
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem
from memdoor.run.tracestore import load_trace
from memdoor.strategies.base import TeamRun

MARKER = "zqhiddenmarker"
STARTER = "class Solution:\n    def shout(self, s: str) -> str:\n        "
GOOD = "class Solution:\n    def shout(self, s):\n        return s.upper()"
OVERFIT = "class Solution:\n    def shout(self, s):\n        return 'AB'"
WRONG = "class Solution:\n    def shout(self, s):\n        return s"
INPUTS = '```input\n"x"\n```\n```input\n"hello"\n```'


def marked_problem() -> Problem:
    tc = lambda i, o: TestCase(kind="functional", input=i, output=o)  # noqa: E731
    return Problem(
        id="shout",
        statement='Return s in upper case.\n\nExample 1:\nInput: s = "ab"\nOutput: "AB"',
        starter_code=STARTER,
        func_name="shout",
        public_tests=[tc('"ab"', '"AB"')],
        hidden_tests=[
            tc(f'"{MARKER} one"', f'"{MARKER.upper()} ONE"'),
            tc(f'"{MARKER}2"', f'"{MARKER.upper()}2"'),
        ],
        prelude="livecodebench",
        platform="leetcode",
    )


def models() -> list[ScriptedModel]:
    first = {
        "draft": [fenced(WRONG)],
        "repair": [fenced(GOOD)],
        "revise": [fenced(GOOD)],
        "refine": [fenced(GOOD)],
        "review": ["- wrong case\nVERDICT: ISSUES", "VERDICT: OK"],
        "inputs": [INPUTS],
        "referee": ["Working it out by hand for this input.\nANSWER: A"],  # sstar's split vote (1 against 1)
    }
    second = {**first, "draft": [fenced(OVERFIT)], "refine": [fenced(OVERFIT)]}
    return [
        ScriptedModel(respond=ByRole(s), spec=f"scripted:{n}") for n, s in (("one", first), ("two", second))
    ]


@pytest.mark.parametrize(
    "strategy",
    ["single", "parallel:2", "sequential:2", "shared:2", "hybrid:2", "sstar:2", "cascade:2", "adaptive:2"],
)
async def test_hidden_tests_never_reach_a_strategy(strategy, sandbox, tmp_path):
    problem = marked_problem()
    pool = ModelPool()
    team_models = models()
    for m in team_models:
        pool.add(m.spec, m)
    memory = InProcMemory()
    env = RunEnv(pool=pool, sandbox=sandbox, memory=memory, trace_dir=tmp_path)
    config = SolveConfig(
        strategy=StrategySpec.parse(strategy),
        models=[m.spec for m in team_models],
        options={"shared:2": {"stop_when_all_pass": False}}.get(strategy, {}),
    )
    sol = await solve_problem(problem, config, env)

    # it ran and was graded on public + hidden tests
    assert sol.error is None and sol.verdict is not None
    assert sol.verdict.tests_total == 3 and sol.code
    expected = {
        "single": False,
        "parallel:2": False,
        "cascade:2": False,
        "adaptive:2": False,
        "shared:2": False,
    }.get(strategy, True)
    # the others fix WRONG (cascade answers with the cheap agent's overfit draft, adaptive never repairs,
    # shared's refinement behaves like agent two's overfit draft on the public test and the fresh draft
    # is preferred, though the team wrote GOOD: its oracle holds)
    assert sol.passed is expected and (sol.code == GOOD) is expected
    assert sol.oracle is (expected or strategy == "shared:2")

    prompts = [json.dumps(call) for m in team_models for call in m.calls]
    assert prompts, "no model was asked anything"
    assert not [p for p in prompts if MARKER in p.lower()]
    if strategy == "sstar:2":  # the referee was asked, and saw no hidden test either
        assert any("Two programs give different answers" in p for p in prompts)
    for task in await memory.tasks():
        for kind in await memory.kinds(task):
            for entry in await memory.entries(task, kind):
                assert MARKER not in json.dumps(entry).lower(), (kind, entry)
        assert MARKER not in json.dumps(await memory.get_final(task)).lower()
    record = load_trace(tmp_path, sol.trace_id)
    assert MARKER not in record.model_dump_json().lower()
    assert {e.kind for e in record.trace.events} >= {"start", "draft", "graded"}


async def test_strategies_refuse_a_problem_with_hidden_tests(sandbox):
    from strategy_helpers import make_ctx, scripted, team_of

    with pytest.raises(UsageError, match="public view"):
        TeamRun(marked_problem(), team_of(scripted({"draft": ["x"]})), make_ctx(sandbox))
