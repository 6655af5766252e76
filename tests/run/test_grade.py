"""The one grading stage (run/grade.py): the answer, the oracle and, when asked, every draft, each
distinct program run on the grading tests once; and the trace record handed over as it is saved."""

from __future__ import annotations

import threading
from collections import Counter

from run_helpers import GOOD, OVERFIT, env_with, fenced, problem

from memdoor.core.candidates import Candidate
from memdoor.core.errors import SandboxError
from memdoor.judging.judge import Judge
from memdoor.models.scripted import ScriptedModel
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.grade import Grader, draft_verdicts
from memdoor.run.solve import solve_problem

GRADING = len(problem().grading_tests)


class CountingSandbox:
    """The real sandbox, counting the programs run on the grading tests; ``broken`` ones raise there."""

    def __init__(self, inner, broken: tuple[str, ...] = ()):
        self.inner, self.name, self.broken = inner, inner.name, broken
        self.graded: Counter[str] = Counter()
        self.lock = threading.Lock()

    def run(self, code, tests, **kw):
        if len(tests) == GRADING:
            with self.lock:
                self.graded[code] += 1
            if any(b in code for b in self.broken):
                raise SandboxError("the sandbox broke")
        return self.inner.run(code, tests, **kw)


def team(first: str, second: str) -> tuple[ScriptedModel, ScriptedModel]:
    """Agents 0 and 2 answer ``first`` (the more confident), agent 1 ``second``; all pass the public tests."""
    return (
        ScriptedModel([fenced(first)], spec="scripted:a", logprob=-0.05),
        ScriptedModel([fenced(second)], spec="scripted:b", logprob=-0.5),
    )


PARALLEL = SolveConfig(strategy=StrategySpec.parse("parallel:3"), models=["scripted:a", "scripted:b"])


async def test_asked_for_drafts_each_distinct_program_is_graded_once(sandbox, tmp_path):
    counting = CountingSandbox(sandbox)
    env = env_with(counting, tmp_path, *team(OVERFIT, GOOD), grade_drafts=True)
    sol = await solve_problem(problem(), PARALLEL, env)
    assert sol.code == OVERFIT and sol.passed is False and sol.oracle is True
    assert [c.code for c in sol.candidates] == [OVERFIT, GOOD, OVERFIT]
    assert [v.passed for v in sol.draft_verdicts] == [False, True, False]
    assert sol.draft_verdicts[0] == sol.draft_verdicts[2] == sol.verdict
    assert counting.graded == Counter({OVERFIT: 1, GOOD: 1})  # the answer, the oracle and the drafts share
    assert "draft_verdicts" not in sol.model_dump()  # graded for a report, never stored with the solution


async def test_without_drafts_only_what_the_oracle_needs_is_graded(sandbox, tmp_path):
    counting = CountingSandbox(sandbox)
    env = env_with(counting, tmp_path, *team(GOOD, OVERFIT))
    sol = await solve_problem(problem(), PARALLEL, env)
    assert sol.code == GOOD and sol.passed is True and sol.oracle is True
    assert sol.draft_verdicts is None and counting.graded == Counter({GOOD: 1})


async def test_a_draft_that_cannot_be_graded_leaves_the_run_standing_without_draft_verdicts(
    sandbox, tmp_path
):
    counting = CountingSandbox(sandbox, broken=("return 3 if",))  # only OVERFIT, which no answer needs
    env = env_with(counting, tmp_path, *team(GOOD, OVERFIT), grade_drafts=True)
    sol = await solve_problem(problem(), PARALLEL, env)
    assert sol.error is None and sol.passed is True and sol.oracle is True
    assert sol.draft_verdicts is None and counting.graded[OVERFIT] == 1


class SlowAfterBreak(CountingSandbox):
    """Grading ``slow`` waits until the broken program has raised, then takes a while; ``finished``
    holds the programs whose grading ran to its end."""

    def __init__(self, inner, broken: str, slow: str):
        super().__init__(inner, broken=(broken,))
        self.slow, self.raised, self.finished = slow, threading.Event(), []

    def run(self, code, tests, **kw):
        if len(tests) == GRADING and self.slow in code:
            self.raised.wait(5)
            threading.Event().wait(0.3)
        try:
            verdict = super().run(code, tests, **kw)
        except SandboxError:
            self.raised.set()
            raise
        self.finished.append(code)
        return verdict


async def test_a_failing_draft_leaves_no_other_draft_grading_after_it_returns(sandbox):
    slow_sandbox = SlowAfterBreak(sandbox, broken="return 3 if", slow="return a + b")
    grader = Grader(problem(), Judge(slow_sandbox))
    drafts = [Candidate(code=code, agent=str(i)) for i, code in enumerate([GOOD, OVERFIT, GOOD, ""])]
    assert await draft_verdicts(grader, drafts) is None
    assert slow_sandbox.finished == [GOOD]  # the other draft finished before draft_verdicts returned
    assert slow_sandbox.graded == Counter({GOOD: 1, OVERFIT: 1})


async def test_the_trace_record_is_handed_over_as_it_is_saved(sandbox, tmp_path):
    handed = []
    env = env_with(
        sandbox, tmp_path, *team(GOOD, OVERFIT), on_record=lambda rec, path: handed.append((rec, path))
    )
    sol = await solve_problem(problem(), PARALLEL, env)
    [(rec, path)] = handed
    assert path == tmp_path / f"{sol.trace_id}.json" and path.is_file()
    assert rec.trace.id == sol.trace_id and rec.final == await env.memory.get_final(sol.trace_id)
    assert rec.trace.events[-1].kind == "graded"
