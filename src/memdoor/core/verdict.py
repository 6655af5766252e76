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

    @classmethod
    def of(
        cls, results: list[TestResult | None], seconds: float, isolation: str, override: Status | None = None
    ) -> Verdict:
        """The verdict of per-test results (None: not run, shown as ``skipped``): the first non-passing
        status unless ``override``; never a pass with tests that did not run."""
        filled = [r if r is not None else TestResult(status="skipped") for r in results]
        status: Status = override or next(
            (r.status for r in filled if r.status not in ("passed", "skipped")), "passed"
        )
        if status == "passed" and any(r.status == "skipped" for r in filled):
            status = "runtime_error"
        return cls(status=status, tests=filled, seconds=seconds, isolation=isolation)

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
