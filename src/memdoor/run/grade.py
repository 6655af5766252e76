"""Outside the team: the answer's estimated chance of being right, then grading on the hidden tests
(the chosen code, and the distinct candidates for the oracle)."""

from __future__ import annotations

from memdoor.core.problem import Problem
from memdoor.core.solution import Solution
from memdoor.judging.judge import Judge
from memdoor.problems.languages import answer_in
from memdoor.select.calibration import Calibration
from memdoor.strategies.context import RunContext


def estimate(solution: Solution, strategy: str, calibration: Calibration | None) -> None:
    """Set the answer's estimated probability of being correct (before grading: from what the team saw)."""
    signals = solution.signals()
    if calibration is None or signals is None:
        return
    solution.p_correct = round(calibration.predict(signals, strategy), 4)
    solution.p_correct_basis = calibration.fitted_on


async def grade_solution(problem: Problem, solution: Solution, ctx: RunContext, judge: Judge) -> None:
    """Grade the chosen code on public + hidden tests, and the oracle over every distinct candidate.

    A problem with no hidden tests is graded on its public tests only (``hidden_tests`` is 0 in the record).
    """
    solution.verdict = await judge.grade(answer_in(problem, solution.language), solution.code)
    solution.passed = solution.verdict.passed
    verdicts = {solution.code.strip(): solution.verdict}
    oracle = solution.passed
    for c in solution.candidates:
        key = c.code.strip()
        if oracle or key in verdicts or not key:
            continue
        if problem.public_tests and c.public is not None and not c.public.passed:
            continue  # fails a public test, so it fails grading (public tests are graded first)
        verdicts[key] = await judge.grade(answer_in(problem, c.language), c.code)
        oracle = verdicts[key].passed
    solution.oracle = oracle
    await ctx.event(
        "graded",
        None,
        passed=solution.passed,
        status=solution.verdict.status,
        tests_passed=solution.verdict.tests_passed,
        tests_total=solution.verdict.tests_total,
        hidden_tests=len(problem.hidden_tests),
        oracle=oracle,
    )
