"""One test's result from the harness's report: compared outside the sandbox, and a forged report is the
candidate's runtime_error, never an exception."""

from __future__ import annotations

import pytest

from memdoor.core.problem import TestCase
from memdoor.sandbox.config import SandboxConfig
from memdoor.sandbox.result import judge, judge_safely

CONFIG = SandboxConfig()


@pytest.mark.parametrize(
    ("test", "payload", "status"),
    [
        (TestCase(kind="stdin", input="", output="3\n"), b"3", "passed"),
        (TestCase(kind="stdin", input="", output="3\n"), b"4", "wrong_answer"),
        (TestCase(kind="functional", input="1", output="[1, 2]"), b"[1, 2]", "passed"),
        (TestCase(kind="functional", input="1", output="[1, 2]"), b"[2, 1]", "wrong_answer"),
        (TestCase(kind="functional", input="1"), b"7", "passed"),
    ],
)
def test_the_output_is_compared_with_the_expected_one(test, payload, status):
    assert judge(CONFIG, test, {"status": "ok", "t": 0.01}, payload, 0.5).status == status


def test_the_harness_time_counts_only_when_it_is_within_the_supervisors():
    test = TestCase(kind="check", input="")
    assert judge(CONFIG, test, {"status": "ok", "t": 0.25}, b"", 0.5).seconds == 0.25
    assert judge(CONFIG, test, {"status": "ok", "t": 9.0}, b"", 0.5).seconds == 0.5
    assert judge(CONFIG, test, {"status": "ok", "t": "soon"}, b"", 0.5).seconds == 0.5


def test_a_failure_or_an_overflow_the_harness_reports_is_kept():
    test = TestCase(kind="stdin", input="", output="x")
    assert judge(CONFIG, test, {"status": "memory_limit"}, b"", 0.1).status == "memory_limit"
    assert judge(CONFIG, test, {"status": "anything"}, b"", 0.1).status == "runtime_error"
    over = judge(CONFIG, test, {"status": "ok", "overflow": True}, b"", 0.1)
    assert over.status == "wrong_answer" and "output exceeds" in over.detail


def test_a_forged_report_is_a_runtime_error_never_an_exception():
    test = TestCase(kind="functional", input="1", output="1")
    assert judge_safely(CONFIG, test, {"status": "ok"}, b"\xff\xfe", 0.1).status == "runtime_error"
    forged = judge_safely(CONFIG, test, [("status", "ok")], b"1", 0.1)  # not even a dict
    assert forged.status == "runtime_error" and forged.detail == "unreadable result (AttributeError)"
