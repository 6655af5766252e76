"""Structured results of running a candidate. A candidate can never make the sandbox raise."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Status = Literal[
    "passed",
    "wrong_answer",
    "runtime_error",
    "time_limit",
    "memory_limit",
    "compile_error",
    "skipped",
    "no_tests",
]
"""Outcome of one test. ``skipped``: not run because an earlier test failed (stop at first failure).
``no_tests`` (a whole verdict only): there was nothing to grade, which is never a pass."""


class TestResult(BaseModel):
    """The outcome of one test."""

    __test__ = False

    status: Status = Field(description="Outcome of this test.")
    seconds: float = Field(default=0.0, description="Wall time the test took.")
    output: str | None = Field(
        default=None,
        description="What the candidate produced (stdout text, or the JSON of the returned value), capped.",
    )
    detail: str = Field(default="", description="Short diagnostic: error type and message, or a diff hint.")


class Verdict(BaseModel):
    """The outcome of running one candidate against a list of tests."""

    status: Status = Field(description="passed iff every test passed; else the first non-passing status.")
    tests: list[TestResult] = Field(default_factory=list, description="One result per test, in order.")
    seconds: float = Field(default=0.0, description="Wall time of the whole run, sandbox start-up included.")
    isolation: str = Field(default="", description="Isolation level used (bwrap, unshare, none).")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def tests_passed(self) -> int:
        return sum(t.status == "passed" for t in self.tests)

    @property
    def tests_total(self) -> int:
        return len(self.tests)

    def failing(self) -> list[int]:
        """Indices of the tests that ran and did not pass."""
        return [i for i, t in enumerate(self.tests) if t.status not in ("passed", "skipped")]
