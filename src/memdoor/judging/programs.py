"""Grading: a candidate's code against all of a problem's tests (public, then hidden), as the official graders do."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from pydantic import Field

from memdoor.core.errors import MemdoorError
from memdoor.core.problem import Problem, TestCase
from memdoor.core.protocols import Sandbox
from memdoor.core.verdict import TestResult, Verdict


def program_for(problem: Problem, code: str) -> str:
    """The program that runs: the problem's grading prefix (HumanEval's prompt) then the candidate (for
    JavaScript and Rust, a whole-function answer replaces the prefix's opened signature: sandbox.lang.program)."""
    if problem.language != "python":
        from memdoor.sandbox.lang.program import join

        return join(problem.language, problem.grading_prefix, code, problem.func_name)
    return f"{problem.grading_prefix}\n{code}" if problem.grading_prefix else code


def grade(
    problem: Problem, code: str, sandbox: Sandbox, *, stop_at_first_failure: bool = True, hidden: bool = True
) -> Verdict:
    """Run ``code`` on the problem's grading tests (``hidden``; see ``Problem.grading_tests``) or on its
    public tests only. Empty code fails without running, as with LiveCodeBench (no code block in the
    answer means a failed sample)."""
    tests = problem.grading_tests if hidden else problem.public_tests
    return run_on(problem, code, tests, sandbox, stop_at_first_failure=stop_at_first_failure)


def run_on(
    problem: Problem, code: str, tests: Sequence[TestCase], sandbox: Sandbox, *, stop_at_first_failure: bool
) -> Verdict:
    """Run ``code`` (after the problem's grading prefix) on ``tests``; empty code fails without running.

    No tests is ``no_tests``, never a pass, whatever the code: loaders refuse problems with nothing to
    grade, and this keeps any other way of getting here (a request without examples) from passing.
    """
    if not tests:
        return Verdict(status="no_tests", tests=[], isolation=sandbox.name)
    if not code.strip():
        results = [TestResult(status="compile_error", detail="no code")] + [
            TestResult(status="skipped") for _ in tests[1:]
        ]
        return Verdict(status="compile_error", tests=results, isolation=sandbox.name)
    if problem.language != "python":  # node or rustc in the same isolation (memdoor.sandbox.lang)
        from memdoor.sandbox.lang.run import run_program

        return run_program(
            sandbox,  # type: ignore[arg-type]  # the real sandbox: it also runs plain commands
            problem.language,
            program_for(problem, code),
            tests,
            func_name=problem.func_name,
            stop_at_first_failure=stop_at_first_failure,
        )
    return sandbox.run(
        program_for(problem, code),
        tests,
        func_name=problem.func_name,
        prelude=problem.prelude,
        stop_at_first_failure=stop_at_first_failure,
    )


class FailedGrading(Verdict):
    """A sample that could not be graded because of an error of Memdoor's own (a bug: anything a candidate
    does is its verdict). Never a pass; ``grade_many`` yields it in the sample's place and goes on."""

    error: str = Field(description="The unexpected error, as 'Type: message'.")


def _grade_one(problem: Problem, code: str, sandbox: Sandbox, stop_at_first_failure: bool) -> Verdict:
    try:
        return grade(problem, code, sandbox, stop_at_first_failure=stop_at_first_failure)
    except MemdoorError:  # the sandbox cannot start, a bad setting: the run's error, not one sample's
        raise
    except Exception as e:
        return FailedGrading(
            status="runtime_error", isolation=sandbox.name, error=f"{type(e).__name__}: {e}"[:500]
        )


def grade_many(
    jobs: Iterable[tuple[Problem, str]],
    sandbox: Sandbox,
    *,
    workers: int,
    stop_at_first_failure: bool = True,
    on_done: Callable[[int, Verdict], None] | None = None,
) -> Iterator[Verdict]:
    """Grade many (problem, code) pairs with ``workers`` candidates running at once; yields in input order.

    Each candidate is its own sandbox process, so threads here only wait on subprocesses. A sample whose
    grading fails unexpectedly yields a ``FailedGrading`` and the others go on; a MemdoorError (e.g.
    SandboxError: the sandbox cannot start) ends the run, and the samples not started are dropped.
    """
    jobs = list(jobs)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="grade") as pool:
        futures = [pool.submit(_grade_one, p, c, sandbox, stop_at_first_failure) for p, c in jobs]
        try:
            for i, f in enumerate(futures):
                v = f.result()
                if on_done is not None:
                    on_done(i, v)
                yield v
        finally:
            for f in futures:  # after an error, or when the caller stops early: start no more
                f.cancel()
