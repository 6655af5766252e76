"""LiveCodeBench's stdin comparison and program-running rules, through the real sandbox.

The expectations are the official grader's (``livecodebench.evaluation.testing_util``); test_parity.py
checks the same programs against the official grader itself.
"""

from __future__ import annotations

import pytest
from lcb_cases import COMPARISON, RUNNING
from sandbox_helpers import stdin_tests


@pytest.mark.parametrize(("code", "expected", "passes"), COMPARISON)
def test_output_comparison(sandbox, code, expected, passes):
    v = sandbox.run(code, stdin_tests(("1 2\n", expected)), prelude="livecodebench")
    assert v.passed is passes, (v.tests[0].status, v.tests[0].output, v.tests[0].detail)


@pytest.mark.parametrize(("code", "passes"), RUNNING)
def test_program_running_rules(sandbox, code, passes):
    v = sandbox.run(code, stdin_tests(("1 2\n", "3\n")), prelude="livecodebench")
    assert v.passed is passes, (v.tests[0].status, v.tests[0].output, v.tests[0].detail)
