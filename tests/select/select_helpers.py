"""Helpers for selector tests: problems, agent-written inputs, a context, a run-counting sandbox wrapper."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memdoor.memory.inproc import InProcMemory
from memdoor.problems.model import Problem, TestCase
from memdoor.sandbox.verdict import TestResult, Verdict
from memdoor.select.vote import VoteSelector
from memdoor.strategies.context import RunContext


class ExecSandbox:
    """A stand-in that execs trusted test programs in-process (functional tests only).

    Only for the control-flow tests that count runs; everything about behaviour uses the real sandbox.
    """

    name = "exec"

    def run(self, code, tests, *, func_name=None, prelude="none", stop_at_first_failure=True) -> Verdict:
        scope: dict = {}
        try:
            exec(code, scope)
            fn = scope[func_name]
        except Exception as e:
            return Verdict(
                status="compile_error",
                tests=[TestResult(status="compile_error", detail=repr(e))] * len(tests),
            )
        results = []
        for t in tests:
            try:
                out = fn(*[json.loads(line) for line in t.input.splitlines() if line.strip()])
            except Exception as e:
                results.append(TestResult(status="runtime_error", detail=repr(e)))
                continue
            ok = t.output is None or out == json.loads(t.output)
            results.append(TestResult(status="passed" if ok else "wrong_answer", output=json.dumps(out)))
        failed = [r.status for r in results if r.status != "passed"]
        return Verdict(status=failed[0] if failed else "passed", tests=results)


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


def make_ctx(sandbox, selector: VoteSelector | None = None) -> RunContext:
    return RunContext(sandbox=sandbox, memory=InProcMemory(), selector=selector or VoteSelector())
