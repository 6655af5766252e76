"""The runner: specs and configs, grading outside the strategy, the oracle, records that survive failures."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from run_helpers import GOOD, OVERFIT, env_with, fenced, problem

from memdoor.bench.config import settings_diff
from memdoor.core.budget import Budget
from memdoor.core.errors import SandboxError, UsageError
from memdoor.memory.inproc import InProcMemory
from memdoor.models.scripted import ScriptedModel
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import open_env
from memdoor.run.solve import solve_problem
from memdoor.run.tracestore import load_trace

# -- specs and configs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "agents", "shown"),
    [
        ("parallel:5", "parallel", 5, "parallel:5"),
        ("single", "single", 1, "single"),
        ("single:1", "single", 1, "single"),
        ("hybrid:2", "hybrid", 2, "hybrid:2"),
        (" sequential:3 ", "sequential", 3, "sequential:3"),
    ],
)
def test_strategy_spec_parse_and_str(text, name, agents, shown):
    spec = StrategySpec.parse(text)
    assert (spec.name, spec.agents, str(spec)) == (name, agents, shown)
    assert StrategySpec.parse(str(spec)) == spec


@pytest.mark.parametrize("text", ["vote", "parallel:x", "parallel:0", "parallel:-1", ""])
def test_bad_strategy_specs_are_usage_errors(text):
    with pytest.raises(UsageError):
        StrategySpec.parse(text)


def test_agents_fill_in_a_missing_count():
    assert StrategySpec.parse("shared", agents=4) == StrategySpec(name="shared", agents=4)


def test_strategy_options_are_checked_against_the_strategy_config():
    ok = SolveConfig(strategy=StrategySpec.parse("sequential:2"), options={"rounds": 5})
    assert ok.make_strategy().config.rounds == 5
    for options in ({"rounds": -1}, {"round": 2}):
        with pytest.raises(UsageError, match="sequential"):
            SolveConfig(strategy=StrategySpec.parse("sequential:2"), options=options).make_strategy()


def test_selector_settings_reach_the_selector():
    config = SolveConfig(strategy=StrategySpec.parse("parallel:5"), selector_options={"k": 2})
    assert config.make_selector().config.k == 2
    with pytest.raises(UsageError, match="selector"):
        SolveConfig(strategy=StrategySpec.parse("parallel:5"), selector_options={"kk": 2}).make_selector()


def test_a_mixed_teams_settings_record_how_its_agents_sample():
    """Mixed teams sample by rank within each model since ed4b87f (team position before): a resume of a
    mixed row made under the old rule is refused with the setting named, single-model rows resume as ever."""
    single = SolveConfig(strategy=StrategySpec.parse("parallel:5"), models=["scripted:a"])
    mixed = SolveConfig(strategy=StrategySpec.parse("cascade:2"), models=["scripted:a", "scripted:b"])
    assert "sampling" not in single.settings()
    assert mixed.settings()["sampling"] == "rank-in-model"
    old = {k: v for k, v in mixed.settings().items() if k != "sampling"}
    assert settings_diff(old, mixed.settings()) == "sampling: (none) → 'rank-in-model'"


# -- solving -------------------------------------------------------------------------------------


async def test_grades_on_hidden_tests_and_reports_the_oracle(sandbox, tmp_path):
    """The popularity trap: two agents overfit the public tests, one is right; the majority loses,
    the oracle shows a correct candidate existed."""
    a = ScriptedModel([fenced(OVERFIT)], spec="scripted:a", logprob=-0.05)
    b = ScriptedModel([fenced(GOOD)], spec="scripted:b", logprob=-0.5)
    env = env_with(sandbox, tmp_path, a, b)
    events = []
    env.on_event = events.append
    config = SolveConfig(strategy=StrategySpec.parse("parallel:3"), models=["scripted:a", "scripted:b"])
    sol = await solve_problem(problem(), config, env)
    assert sol.error is None and sol.strategy == "parallel:3"
    assert sol.code == OVERFIT and sol.passed is False and sol.oracle is True
    assert sol.verdict.tests_total == 4 and sol.verdict.status == "wrong_answer"
    assert sol.public_verdict.passed  # the strategy only saw the public tests pass
    assert sol.ledger.wall_seconds > 0 and sol.ledger.totals().calls == 3
    assert events[0].kind == "start" and events[-1].kind == "graded"

    final = await env.memory.get_final(sol.trace_id)
    assert final["passed"] is False and final["oracle"] is True and final["hidden_tests"] == 2
    assert final["config"]["strategy"] == {"name": "parallel", "agents": 3}
    assert final["verdict"] == {"status": "wrong_answer", "tests_passed": 2, "tests_total": 4}
    stored = await env.memory.entries(sol.trace_id, "trace")
    assert stored[-1]["trace"]["id"] == sol.trace_id
    record = load_trace(tmp_path, sol.trace_id)
    assert record.final == final and [e.kind for e in record.trace.events] == [e.kind for e in events]


class SlowGrading:
    """The real sandbox, with a pause before every run that includes hidden tests (the final grading)."""

    def __init__(self, inner, pause: float):
        self.inner, self.pause, self.name = inner, pause, inner.name

    def run(self, code, tests, **kw):
        if len(tests) > 2:
            time.sleep(self.pause)
        return self.inner.run(code, tests, **kw)


async def test_the_teams_seconds_exclude_the_final_grading(sandbox, tmp_path):
    env = env_with(SlowGrading(sandbox, 2.0), tmp_path, ScriptedModel([fenced(GOOD)], spec="scripted:a"))
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:a"])
    t0 = time.monotonic()
    sol = await solve_problem(problem(), config, env)
    elapsed = time.monotonic() - t0
    assert sol.passed is True and sol.verdict.tests_total == 4
    assert 0 < sol.ledger.wall_seconds <= elapsed - 2.0


async def test_without_hidden_tests_the_public_tests_grade(sandbox, tmp_path):
    env = env_with(sandbox, tmp_path, ScriptedModel([fenced(OVERFIT)], spec="scripted:a"))
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:a"])
    sol = await solve_problem(problem(hidden=False), config, env)
    assert sol.passed is True and sol.verdict.tests_total == 2
    assert (await env.memory.get_final(sol.trace_id))["hidden_tests"] == 0


async def test_prices_and_token_totals_reach_the_ledger(sandbox, tmp_path):
    env = env_with(sandbox, tmp_path, ScriptedModel([fenced(GOOD)], spec="scripted:a"))
    env.price = lambda model, usage: 1e-6 * (usage.prompt_tokens + usage.completion_tokens)
    config = SolveConfig(strategy=StrategySpec.parse("parallel:2"), models=["scripted:a"])
    sol = await solve_problem(problem(), config, env)
    t = sol.ledger.totals()
    assert t.calls == 2 and t.prompt_tokens > 0 and t.completion_tokens > 0
    assert t.usd == pytest.approx(1e-6 * t.tokens)


async def test_a_crashing_run_is_recorded_not_lost(sandbox, tmp_path):
    boom = ScriptedModel([RuntimeError("bug in a backend")], spec="scripted:boom")
    env = env_with(sandbox, tmp_path, boom)
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:boom"])
    sol = await solve_problem(problem(), config, env)
    assert sol.stopped == "error" and "RuntimeError: bug in a backend" in sol.error
    assert sol.passed is None and sol.trace_id
    assert sol.error_type == "builtins.RuntimeError" and sol.error_class is RuntimeError
    final = await env.memory.get_final(sol.trace_id)
    assert "bug in a backend" in final["error"] and final["config"]["models"] == ["scripted:boom"]
    assert any(e.kind == "error" for e in load_trace(tmp_path, sol.trace_id).trace.events)


async def test_test_inputs_are_written_inside_the_run_budgeted_and_recorded(sandbox, tmp_path):
    """A problem with no tests: the first agent writes inputs (a call in the ledger, under the budget),
    the team is told apart on them, and the run is graded on them (outputs recorded, not compared)."""

    def respond(messages):
        if "write only calls of `add`" in messages[-1]["content"]:  # answered as a small model does
            return "```python\nx = 5\nprint(add(1, 2))  # 3\nassert add(x, x) == 10\n```\n"
        return fenced(GOOD)

    env = env_with(sandbox, tmp_path, ScriptedModel(respond=respond, spec="scripted:a"))
    started = []
    env.on_start = started.append
    bare = problem(hidden=False).model_copy(update={"public_tests": []})
    config = SolveConfig(strategy=StrategySpec.parse("parallel:2"), models=["scripted:a"], test_inputs=2)
    sol = await solve_problem(bare, config, env)
    assert started == [sol.trace_id] and sol.error is None
    assert [c.role for c in sol.ledger.calls] == ["tests", "draft", "draft"]
    assert [t.input for t in sol.written_tests] == ["1\n2", "5\n5"] and sol.tests_note is None
    assert sol.public_verdict.tests_total == 2 and sol.verdict.tests_total == 2
    (written,) = await env.memory.entries(sol.trace_id, "tests")
    assert written == {"agent": "agent0", "inputs": ["1\n2", "5\n5"]}

    spent = await solve_problem(bare, config.model_copy(update={"budget": Budget(calls=1)}), env)
    assert [c.role for c in spent.ledger.calls] == ["tests"] and spent.stopped == "budget"

    none = await solve_problem(bare, config.model_copy(update={"test_inputs": 0}), env)
    assert [c.role for c in none.ledger.calls] == ["draft", "draft"] and none.written_tests == []


async def test_a_budget_stop_is_still_graded(sandbox, tmp_path):
    env = env_with(sandbox, tmp_path, ScriptedModel([fenced(GOOD)], spec="scripted:a"))
    config = SolveConfig(
        strategy=StrategySpec.parse("shared:3"),
        models=["scripted:a"],
        budget=Budget(calls=3),
        options={
            "stop_when_all_pass": False,
            "refine": "all",
        },  # passing drafts are rewritten: budget runs out
    )
    sol = await solve_problem(problem(), config, env)
    assert sol.stopped == "budget" and sol.passed is True and sol.ledger.totals().calls == 3


async def test_cancellation_still_records_the_run(sandbox, tmp_path):
    slow = ScriptedModel([fenced(GOOD)], spec="scripted:slow", delay=60)
    env = env_with(sandbox, tmp_path, slow)
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:slow"])
    task = asyncio.create_task(solve_problem(problem(), config, env))
    while not slow.calls:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (task_id,) = await env.memory.tasks()
    final = await env.memory.get_final(task_id)
    assert final["error"] == "interrupted" and final["stopped"] == "error"
    assert load_trace(tmp_path, task_id).final == final


async def test_a_broken_memory_does_not_hide_the_result(sandbox, tmp_path):
    class DownMemory(InProcMemory):
        async def set_final(self, task_id, answer):
            from memdoor.core.errors import MemoryStoreError

            raise MemoryStoreError("redis is down")

    env = env_with(sandbox, tmp_path, ScriptedModel([fenced(GOOD)], spec="scripted:a"))
    env.memory = DownMemory()
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:a"])
    sol = await solve_problem(problem(), config, env)
    assert sol.passed is True and "redis is down" in sol.error
    assert json.loads(load_trace(tmp_path, sol.trace_id).model_dump_json())["final"]["passed"] is True


# -- the environment builder ---------------------------------------------------------------------


class Given:
    """A caller's part (pool or sandbox): counts the closes open_env must not make."""

    name = "given"

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1

    async def aclose(self) -> None:
        self.closed += 1


async def test_open_env_closes_what_it_opened_and_only_that(monkeypatch):
    from memdoor.sandbox.supervisor import Supervisor

    closed: list[object] = []
    close_sandbox, close_memory = Supervisor.close, InProcMemory.aclose

    def record_sandbox(self):
        closed.append(self)
        close_sandbox(self)

    async def record_memory(self):
        closed.append(self)
        await close_memory(self)

    monkeypatch.setattr(Supervisor, "close", record_sandbox)
    monkeypatch.setattr(InProcMemory, "aclose", record_memory)

    async with open_env(slots=2) as env:  # opens its sandbox, memory and pool
        assert closed == [] and env.sandbox_slots is not None
        opened = (env.sandbox, env.memory)
    assert closed == [opened[0], opened[1]]  # last opened, first closed

    closed.clear()
    pool, sandbox = Given(), Given()
    async with open_env(pool=pool, sandbox=sandbox) as env:
        assert env.pool is pool and env.sandbox is sandbox and env.sandbox_slots is None
    assert (pool.closed, sandbox.closed) == (0, 0) and closed == [env.memory]


async def test_open_env_closes_what_it_opened_when_a_later_part_fails(monkeypatch):
    from memdoor.sandbox import SandboxConfig

    closed: list[object] = []
    close_memory = InProcMemory.aclose

    async def record_memory(self):
        closed.append(self)
        await close_memory(self)

    monkeypatch.setattr(InProcMemory, "aclose", record_memory)
    with pytest.raises(SandboxError):
        async with open_env(sandbox_config=SandboxConfig(python="/nonexistent/python3")):
            pass
    assert len(closed) == 1


async def test_an_installed_calibration_gives_the_answer_an_estimate_before_grading(sandbox, tmp_path):
    from memdoor.select.calibration import FEATURES, Calibration

    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("public_all_passed")] = 2.0
    cal = Calibration(features=list(FEATURES), weights=weights, bias=-1.0, fitted_on="a test")
    model = ScriptedModel([fenced(OVERFIT)], spec="scripted:o")
    config = SolveConfig(strategy=StrategySpec.parse("parallel:2"), models=["scripted:o"])
    sol = await solve_problem(problem(), config, env_with(sandbox, tmp_path, model, calibration=cal))
    # OVERFIT passes the public tests (the team cannot know it fails the hidden ones): sigmoid(2 - 1).
    assert sol.p_correct == pytest.approx(1 / (1 + 2.718281828**-1), abs=1e-3) and not sol.passed
    assert sol.p_correct_basis == "a test" and sol.record().p_correct == sol.p_correct
    bare = await solve_problem(problem(), config, env_with(sandbox, tmp_path, model))
    assert bare.p_correct is None


async def test_a_spec_holding_a_password_is_shown_without_it(sandbox, tmp_path):
    # the answer's agents, the trace's start and strategy events, the final answer in memory, the trace file
    spec = "openai:m@http://alice:s3cretpw@127.0.0.1:9/v1?api_key=sk-hush"
    env = env_with(sandbox, tmp_path, ScriptedModel([fenced(GOOD)], spec=spec))
    events = []
    env.on_event = events.append
    config = SolveConfig(strategy=StrategySpec.parse("parallel:2"), models=[spec], params={spec: 1e9})
    sol = await solve_problem(problem(), config, env)
    assert sol.code == GOOD
    shown = "openai:m@http://alice:***@127.0.0.1:9/v1?api_key=***"
    assert sol.agents == [f"agent0={shown}", f"agent1={shown}"]
    assert events[0].data["config"]["models"] == [shown]
    final = await env.memory.get_final(sol.trace_id)
    record = load_trace(tmp_path, sol.trace_id)
    for text in (
        json.dumps(sol.record().model_dump(mode="json")),
        json.dumps(final),
        record.model_dump_json(),
    ):
        assert "s3cretpw" not in text and "sk-hush" not in text
    assert events and all("s3cretpw" not in e.model_dump_json() for e in events)
