"""Helpers for selector tests: problems, agent-written inputs, a judge, a run-counting sandbox wrapper."""

from __future__ import annotations

from collections.abc import Sequence

from memdoor.core.problem import Problem, TestCase
from memdoor.core.verdict import Verdict
from memdoor.judging.judge import Judge


class Counting:
    """Wraps a sandbox and records every program it was asked to run."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.programs = inner, getattr(inner, "name", "counting"), []

    def run(self, code, tests, **kw) -> Verdict:
        self.programs.append((code, len(tests)))
        return self.inner.run(code, tests, **kw)


def functional_problem(
    func_name: str, cases: Sequence[tuple[str, str]], hidden: Sequence[tuple[str, str]] = ()
) -> Problem:
    """A functional problem; each case is (JSON argument lines, JSON expected result)."""
    return Problem(
        id=f"p-{func_name}",
        statement=f"Write {func_name}.",
        func_name=func_name,
        public_tests=[TestCase(kind="functional", input=i, output=o) for i, o in cases],
        hidden_tests=[TestCase(kind="functional", input=i, output=o) for i, o in hidden],
    )


def extra(*inputs: str, kind: str = "functional") -> list[TestCase]:
    """Agent-written inputs: no expected output."""
    return [TestCase(kind=kind, input=i) for i in inputs]


def make_runner(sandbox) -> Judge:
    """What a selector runs candidates with (the runner gives it the run's judge)."""
    return Judge(sandbox)
