"""Where a run cut short records its one non-passing outcome: on the load, the running test, or the last."""

from __future__ import annotations

from memdoor.core.verdict import TestResult
from memdoor.sandbox.session import (
    PROTOCOL_VIOLATION,
    Session,
    blame_memory,
    record,
    timed_out,
    violation,
)


def passed(seconds: float) -> TestResult:
    return TestResult(status="passed", seconds=seconds, output="out")


def test_an_outcome_goes_to_the_load_or_the_running_test():
    loading = Session(phase="load")
    timed_out(loading, 0, 3, 9.0)
    assert loading.load.status == "time_limit" and loading.results == []
    testing = Session(phase="test", results=[(0, passed(0.1))])
    timed_out(testing, 1, 3, 2.0)
    assert testing.results[1] == (1, TestResult(status="time_limit", seconds=2.0, detail="wall-clock limit"))
    assert testing.load is None


def test_after_the_last_result_the_last_test_takes_it_keeping_its_time_and_output():
    s = Session(phase="test", results=[(0, passed(0.1)), (1, passed(0.2))])
    timed_out(s, 2, 2, 5.0)  # the run never ended: the program stalled it
    assert s.killed_for == "protocol" and len(s.results) == 2
    i, last = s.results[-1]
    assert (i, last.status, last.seconds, last.output) == (1, "runtime_error", 0.2, "out")
    assert last.detail.startswith(PROTOCOL_VIOLATION)


def test_no_tests_at_all_makes_the_outcome_the_runs():
    s = Session(phase="test")
    violation(s, 0, 0, "garbage")
    assert s.load.detail == f"{PROTOCOL_VIOLATION}: garbage" and s.results == []
    bare = Session(phase="test")
    record(bare, 0, 0, TestResult(status="runtime_error"))
    assert bare.load == TestResult(status="runtime_error") and bare.results == []


def test_out_of_memory_turns_the_runtime_error_it_caused_into_memory_limit():
    s = Session(phase="test", results=[(0, passed(0.1)), (1, TestResult(status="runtime_error"))])
    blame_memory(s, 256)
    assert [r.status for _, r in s.results] == ["passed", "memory_limit"]
    assert "256 MiB" in s.results[1][1].detail
    untouched = Session(phase="test", results=[(0, TestResult(status="wrong_answer"))])
    blame_memory(untouched, 256)
    assert untouched.results[0][1].status == "wrong_answer"
