"""One projection of a Solution: every face (memory's final answer, solve --json, serve, the seed answer,
the bench store) reports the same values for the fields they share, and no test contents."""

from __future__ import annotations

from memdoor.bench.config import RowSpec
from memdoor.bench.loop import result_from_solution
from memdoor.commands.solve import result_json
from memdoor.distributed.seed import done_answer
from memdoor.distributed.seedtask import SeedTask
from memdoor.errors import SandboxError
from memdoor.ledger import CallRecord, Ledger
from memdoor.problems.model import Problem, TestCase
from memdoor.runner import SolveConfig, StrategySpec, final_answer
from memdoor.sandbox.verdict import TestResult, Verdict
from memdoor.select.types import Candidate, Selection
from memdoor.solution import AgentFailure, Solution

SECRET = "hidden-input-7f3a"


def problem() -> Problem:
    return Problem(
        id="p1",
        statement="Return x.",
        func_name="f",
        public_tests=[TestCase(kind="functional", input="1", output="1")],
        hidden_tests=[TestCase(kind="functional", input=SECRET, output="2")],
    )


def solution() -> Solution:
    public = Verdict(status="passed", tests=[TestResult(status="passed")])
    graded = Verdict(
        status="wrong_answer",
        tests=[TestResult(status="passed"), TestResult(status="wrong_answer", output=SECRET)],
    )
    ledger = Ledger(wall_seconds=1.23456)
    ledger.add(CallRecord(agent="agent0", model="m", role="draft", prompt_tokens=10, completion_tokens=5))
    ledger.add(CallRecord(agent="agent1", model="m", role="draft", ok=False, error="ModelUnavailable: down"))
    sol = Solution(
        problem_id="p1",
        strategy="parallel:2",
        code="def f(x):\n    return x",
        agent="agent0",
        agents=["agent0=m", "agent1=m"],
        confidence=0.75,
        candidates=[Candidate(code="def f(x):\n    return x", agent="agent0", public=public)],
        selection=Selection(index=0, reason="only-one"),
        public_verdict=public,
        failures=[AgentFailure(agent="agent1", error="ModelUnavailable: down")],
        ledger=ledger,
        trace_id="t1",
        verdict=graded,
        passed=False,
        oracle=False,
    )
    return sol.failed_with(SandboxError("the isolation tool broke"))


def test_the_record_is_the_solution_without_test_contents():
    r = solution().record()
    assert (r.problem_id, r.strategy, r.agent, r.confidence, r.selection) == (
        "p1",
        "parallel:2",
        "agent0",
        0.75,
        "only-one",
    )
    assert r.verdict.model_dump() == {"status": "wrong_answer", "tests_passed": 1, "tests_total": 2}
    assert r.public.status == "passed" and [c.public for c in r.candidates] == ["passed"]
    assert (r.totals.calls, r.totals.failed_calls, r.totals.tokens) == (2, 1, 15)
    assert r.error_type == "memdoor.errors.SandboxError" and r.stopped == "error"
    assert SECRET not in r.model_dump_json()


def test_every_face_reports_the_same_values():
    p, sol = problem(), solution()
    r = sol.record()
    config = SolveConfig(strategy=StrategySpec.parse("parallel:2"), models=["m"])
    final = final_answer(p, config, sol)
    cli = result_json(sol, p.graded_on)
    seed = done_answer(SeedTask(id="p1", prompt="Return x."), p, sol, "memory:p1:trace", 2.0, jobs=2)
    row = result_from_solution(
        p,
        RowSpec(name="parallel:2", strategy="parallel:2", models=["m"]),
        sol,
        None,
        started="s",
        seconds=2.0,
    )
    for face in (final, cli, seed):
        assert (face["code"], face["agent"], face["agents"]) == (r.code, r.agent, r.agents)
        assert (face["strategy"], face["confidence"], face["stopped"]) == (
            r.strategy,
            r.confidence,
            r.stopped,
        )
        assert (face["error"], face["trace_id"]) == (r.error, r.trace_id)
        assert SECRET not in str(face)
    for face in (final, cli):
        assert face["verdict"] == r.verdict.model_dump() and face["passed"] is r.passed is False
        assert face["failures"] == [f.model_dump() for f in r.failures]
        assert face["ledger"]["calls"] == r.totals.calls and face["oracle"] is r.oracle
    assert final["error_type"] == r.error_type and final["hidden_tests"] == 1
    assert cli["ledger"]["wall_seconds"] == 1.235
    assert seed["calls"] == r.totals.calls and seed["tokens"] == r.totals.tokens
    assert seed["selection"] == "only-one" and seed["public"] == {"status": "passed", "passed": 1, "total": 1}
    assert seed["candidates"] == [{"agent": "agent0", "round": 0, "public": "passed"}]
    assert (row.code, row.confidence, row.stopped, row.trace_id) == (
        r.code,
        r.confidence,
        r.stopped,
        r.trace_id,
    )
    assert (row.verdict_status, row.tests_passed, row.tests_total) == ("wrong_answer", 1, 2)
    assert (row.calls, row.failed_calls, row.strategy_seconds) == (2, 1, r.totals.wall_seconds)
    assert row.status == "error" and row.error_type == r.error_type and row.retryable
