"""Outside the team: the answer's estimated chance of being right, then the one grading stage.

:func:`grade_run` turns a team's answer and its candidates into one :class:`GradedRun`: the answer on
public + hidden tests, the oracle (whether any distinct candidate passes them) and, when a report asks
(``RunEnv.grade_drafts``), every candidate's verdict. Each distinct program (its text and language) runs
on the grading tests at most once per run (:class:`Grader`), whichever of these needs it first.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from memdoor.core.candidates import Candidate
from memdoor.core.errors import MemdoorError
from memdoor.core.problem import Problem
from memdoor.core.solution import Solution
from memdoor.core.verdict import Verdict
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


class GradedRun(BaseModel):
    """One run's grading: what :func:`grade_run` found, before it is set on the Solution."""

    verdict: Verdict = Field(description="The answer on the grading tests.")
    oracle: bool = Field(description="Whether the answer or any distinct candidate passes them.")
    drafts: list[Verdict | None] | None = Field(
        default=None,
        description="Each candidate's verdict, in candidate order (None: no code); None when not asked "
        "for, or when grading them failed (the run stands without them).",
    )

    def apply(self, solution: Solution) -> None:
        """Set this grading on ``solution`` (verdict, passed, oracle, draft verdicts)."""
        solution.verdict = self.verdict
        solution.passed = self.verdict.passed
        solution.oracle = self.oracle
        solution.draft_verdicts = self.drafts


class Grader:
    """Grades one run's programs on the problem's grading tests, each distinct program (its stripped
    text and language) at most once: a program asked for again gets the same verdict."""

    def __init__(self, problem: Problem, judge: Judge):
        self.problem = problem
        self.judge = judge
        self.verdicts: dict[tuple[str, str | None], Verdict] = {}

    async def grade(self, code: str, language: str | None) -> Verdict:
        """``code`` in ``language`` (None: the problem's own) on the grading tests."""
        key = (code.strip(), language)
        if key not in self.verdicts:
            self.verdicts[key] = await self.judge.grade(answer_in(self.problem, language), code)
        return self.verdicts[key]


def oracle_order(problem: Problem, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates the oracle may grade, in order: with code, and not failing a public test (public
    tests are graded first, so such a candidate fails grading)."""
    return [
        c
        for c in candidates
        if c.code.strip() and not (problem.public_tests and c.public is not None and not c.public.passed)
    ]


async def grade_run(
    problem: Problem, solution: Solution, ctx: RunContext, judge: Judge, *, drafts: bool = False
) -> GradedRun:
    """Grade the team's answer on public + hidden tests, then the distinct candidates until one passes
    (the oracle), then — with ``drafts`` — every other distinct candidate, concurrently (the judge caps
    the sandbox slots). A ``graded`` event records the answer's grading.

    A problem with no hidden tests is graded on its public tests only (``hidden_tests`` is 0 in the
    event). Grading the drafts is for a report only: if it fails (a MemdoorError), the run stands with
    ``drafts`` None.
    """
    grader = Grader(problem, judge)
    verdict = await grader.grade(solution.code, solution.language)
    oracle = verdict.passed
    for c in oracle_order(problem, solution.candidates):
        if oracle:
            break
        oracle = (await grader.grade(c.code, c.language)).passed
    await ctx.event(
        "graded",
        None,
        passed=verdict.passed,
        status=verdict.status,
        tests_passed=verdict.tests_passed,
        tests_total=verdict.tests_total,
        hidden_tests=len(problem.hidden_tests),
        oracle=oracle,
    )
    graded = GradedRun(verdict=verdict, oracle=oracle)
    if drafts:
        graded.drafts = await draft_verdicts(grader, solution.candidates)
    return graded


async def draft_verdicts(grader: Grader, candidates: list[Candidate]) -> list[Verdict | None] | None:
    """Each candidate's verdict (None for one without code), every distinct program graded once, the
    ones not graded yet concurrently; None when grading one failed (the others still finish first)."""
    wanted = dict.fromkeys((c.code.strip(), c.language) for c in candidates if c.code.strip())
    todo = [key for key in wanted if key not in grader.verdicts]
    results = await asyncio.gather(*(grader.grade(code, lang) for code, lang in todo), return_exceptions=True)
    if any(isinstance(r, MemdoorError) for r in results):
        return None
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [grader.verdicts[(c.code.strip(), c.language)] if c.code.strip() else None for c in candidates]
