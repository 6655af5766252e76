"""The one way code is run on tests during a run: async, off the event loop, within the sandbox slots.

A :class:`Judge` serves the strategies and the selector (public tests and agent-written inputs, through
the :class:`~memdoor.core.protocols.CodeRunner` port) and the runner's grading (public + hidden tests).
Both run the same program (:func:`memdoor.judging.programs.run_on`: the problem's grading prefix, then the
code; empty code fails without running).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from memdoor.core.problem import Problem, TestCase
from memdoor.core.protocols import Sandbox
from memdoor.core.verdict import Verdict
from memdoor.judging.programs import run_on


class Judge:
    """Runs candidates in ``sandbox``, at most ``slots`` at once (None: no limit beyond the sandbox's)."""

    def __init__(self, sandbox: Sandbox, slots: asyncio.Semaphore | None = None):
        self.sandbox = sandbox
        self.slots = slots

    async def run_tests(
        self,
        problem: Problem,
        code: str,
        tests: Sequence[TestCase] | None = None,
        *,
        stop_at_first_failure: bool = False,
    ) -> Verdict:
        """``code`` on ``tests`` (default: the problem's public tests), every test run unless told to stop."""
        tests = problem.public_tests if tests is None else list(tests)
        return await self._run(problem, code, tests, stop_at_first_failure)

    async def grade(self, problem: Problem, code: str) -> Verdict:
        """``code`` on the problem's grading tests (see ``Problem.grading_tests``), stopping at the first
        failure as the official graders do. Only the runner calls this, after the strategy returned."""
        return await self._run(problem, code, problem.grading_tests, True)

    async def _run(self, problem: Problem, code: str, tests: Sequence[TestCase], stop: bool) -> Verdict:
        def run() -> Verdict:
            return run_on(problem, code, tests, self.sandbox, stop_at_first_failure=stop)

        if self.slots is None:
            return await asyncio.to_thread(run)
        async with self.slots:
            return await asyncio.to_thread(run)
