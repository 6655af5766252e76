"""One projection of a Solution: every face (memory's final answer, solve --json, serve, the seed answer,
the bench store) reports the same values for the fields they share, and no test contents."""

from __future__ import annotations

import json

from memdoor.bench.config import RowSpec
from memdoor.bench.loop import result_from_solution
from memdoor.commands.solve import result_json
from memdoor.core.candidates import Candidate, Selection
from memdoor.core.errors import SandboxError
from memdoor.core.ledger import CallRecord, Ledger
from memdoor.core.problem import Problem, TestCase
from memdoor.core.solution import AgentFailure, Solution
from memdoor.core.verdict import TestResult, Verdict
from memdoor.distributed.seed import done_answer
from memdoor.distributed.seedtask import SeedTask
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.record import final_answer

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
    assert r.error_type == "memdoor.core.errors.SandboxError" and r.stopped == "error"
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


def test_agreement_is_said_as_agreement_not_as_a_probability():
    wrong = Verdict(
        status="wrong_answer", tests=[TestResult(status="wrong_answer"), TestResult(status="passed")]
    )
    cands = [Candidate(code=f"def f(x): return {i}", agent=f"agent{i}", public=wrong) for i in range(3)]
    sol = Solution(
        problem_id="p",
        strategy="parallel:3",
        candidates=cands,
        selection=Selection(index=1, reason="no-survivor", groups=[[0, 1, 2]], confidence=1.0),
        confidence=1.0,
        public_verdict=wrong,
    )
    assert sol.agreement() == "3 of 3 agents agree"
    assert sol.record().agreement == "3 of 3 agents agree"
    split = sol.model_copy(update={"selection": Selection(index=2, groups=[[0, 1], [2]])})
    assert split.agreement() == "1 of 3 agents agree"
    # Several candidates of one agent (a repaired draft beside the draft): counted as candidates.
    repeated = sol.model_copy(update={"candidates": [*cands[:2], cands[1]]})
    assert repeated.agreement() == "3 of 3 candidates agree"
    assert Solution(problem_id="p", strategy="single").agreement() is None


def test_the_summary_says_agreement_and_public_tests_in_words():
    from memdoor.commands.solve import summary

    wrong = Verdict(
        status="wrong_answer", tests=[TestResult(status="wrong_answer"), TestResult(status="passed")]
    )
    cands = [Candidate(code="def f(x): return 0", agent=f"agent{i}", public=wrong) for i in range(3)]
    sol = Solution(
        problem_id="p",
        strategy="parallel:3",
        code="def f(x): return 0",
        agent="agent0",
        candidates=cands,
        selection=Selection(index=0, groups=[[0, 1, 2]], confidence=1.0),
        confidence=1.0,
        public_verdict=wrong,
    )
    text = summary(sol, "public+hidden")
    assert "3 of 3 agents agree" in text and "public tests: failed 1 of 2 (wrong_answer)" in text
    assert "confidence: 1.00" not in text


def test_signals_are_what_the_team_saw_before_grading():
    passed = Verdict(status="passed", tests=[TestResult(status="passed"), TestResult(status="passed")])
    cands = [
        Candidate(code="def f(x): return 1", agent="agent0", mean_logprob=-0.2, public=passed),
        Candidate(code="def f(x): return 1 ", agent="agent1", mean_logprob=-0.4, public=passed),
        Candidate(code="def f(x): return 2", agent="agent2", mean_logprob=-0.1, public=passed),
    ]
    sol = Solution(
        problem_id="p",
        strategy="parallel:3",
        code="def f(x): return 1",
        candidates=cands,
        selection=Selection(index=0, rule="majority", reason="majority", groups=[[0, 1], [2]]),
        public_verdict=passed,
    )
    s = sol.signals()
    assert s is not None
    assert (s.agree, s.pool, s.public_passed, s.public_total, s.mean_logprob, s.rule) == (
        2,
        3,
        2,
        2,
        -0.2,
        "majority",
    )
    single = Solution(
        problem_id="p",
        strategy="single",
        code="def f(x): return 1",
        candidates=cands[:1],
        public_verdict=passed,
    )
    assert (
        single.signals().agree == 1
        and single.signals().rule is None
        and single.signals().mean_logprob == -0.2
    )
    assert Solution(problem_id="p", strategy="single").signals() is None


def test_the_bench_stores_the_signals():
    sol = solution()
    row = RowSpec(name="parallel:2", strategy="parallel:2", models=["m"])
    rec = result_from_solution(problem(), row, sol, None, started="t", seconds=1.0)
    assert rec.signals is not None and json.loads(rec.signals)["agree"] == 1
