"""Defence in depth (issue 11, item 1): if grading one sample still fails unexpectedly, grade_many records that
sample's error and the others keep their verdicts; a sandbox that cannot start stays an error of the run."""

from __future__ import annotations

import pytest

from memdoor.core.errors import SandboxError
from memdoor.core.problem import Problem, TestCase
from memdoor.judging.programs import FailedGrading, grade_many

PROBLEM = Problem(
    id="mul",
    statement="multiply",
    public_tests=[TestCase(kind="stdin", input="6 7\n", output="42\n")],
    prelude="livecodebench",
)
GOOD = "a, b = map(int, input().split())\nprint(a * b)"
BAD = "a, b = map(int, input().split())\nprint(a + b)"


class Faulty:
    """The real sandbox, except that a marked candidate makes ``run`` raise (as a grader bug would) or the
    sandbox fail to start: only the control flow is faked, every other candidate really runs."""

    def __init__(self, sandbox, error: Exception):
        self.sandbox, self.error, self.name = sandbox, error, sandbox.name

    def run(self, code, tests, **kwargs):
        if "# raise" in code:
            raise self.error
        return self.sandbox.run(code, tests, **kwargs)


def test_an_unexpected_error_is_that_samples_and_the_others_keep_their_verdicts(sandbox):
    faulty = Faulty(sandbox, IndexError("list assignment index out of range"))
    jobs = [(PROBLEM, GOOD), (PROBLEM, GOOD + "\n# raise"), (PROBLEM, BAD), (PROBLEM, GOOD)]
    verdicts = list(grade_many(jobs, faulty, workers=2))
    assert [v.status for v in verdicts] == ["passed", "runtime_error", "wrong_answer", "passed"]
    failed = verdicts[1]
    assert isinstance(failed, FailedGrading) and not failed.passed
    assert failed.error == "IndexError: list assignment index out of range"
    assert not any(isinstance(v, FailedGrading) for v in verdicts[:1] + verdicts[2:])


def test_a_sandbox_that_cannot_start_is_an_error_of_the_run(sandbox):
    faulty = Faulty(sandbox, SandboxError("the bwrap sandbox did not start"))
    verdicts = grade_many(
        [(PROBLEM, GOOD), (PROBLEM, GOOD + "\n# raise"), (PROBLEM, GOOD)], faulty, workers=1
    )
    assert next(verdicts).passed
    with pytest.raises(SandboxError):
        next(verdicts)
