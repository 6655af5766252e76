"""What a strategy gets besides the problem and the team: sandbox, memory, budget, ledger, trace."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdoor.budget import BudgetTracker
from memdoor.ledger import Ledger
from memdoor.models.types import Usage
from memdoor.trace import Trace, TraceEvent

if TYPE_CHECKING:
    from memdoor.problems.model import Problem, TestCase
    from memdoor.protocols import Memory, Sandbox, Selector
    from memdoor.sandbox.verdict import Verdict

PriceFn = Callable[[str, Usage], "float | None"]


def _unpriced(model: str, usage: Usage) -> float | None:
    return None


@dataclass
class RunContext:
    """Everything a strategy may use on one problem. One per (problem, strategy) run; never shared."""

    sandbox: Sandbox
    memory: Memory
    selector: Selector
    budget: BudgetTracker = field(default_factory=BudgetTracker)
    ledger: Ledger = field(default_factory=Ledger)
    trace: Trace = field(default_factory=Trace)
    price: PriceFn = _unpriced
    on_event: Callable[[TraceEvent], None] | None = None
    sandbox_slots: asyncio.Semaphore | None = None

    @property
    def task_id(self) -> str:
        return self.trace.id

    async def event(self, kind: str, agent: str | None = None, **data: Any) -> None:
        """Record a step in the trace and in the shared memory's timeline."""
        ev = self.trace.add(kind, agent, **data)
        await self.memory.append(self.task_id, "timeline", ev.model_dump())
        if self.on_event is not None:
            self.on_event(ev)

    async def run_tests(
        self,
        problem: Problem,
        code: str,
        tests: Sequence[TestCase] | None = None,
        *,
        stop_at_first_failure: bool = False,
    ) -> Verdict:
        """Run ``code`` on ``tests`` (default: the problem's public tests) in the sandbox, off the event loop."""
        tests = problem.public_tests if tests is None else list(tests)
        prefix = problem.grading_prefix
        program = f"{prefix}\n{code}" if prefix else code

        def run() -> Verdict:
            return self.sandbox.run(
                program,
                tests,
                func_name=problem.func_name,
                prelude=problem.prelude,
                stop_at_first_failure=stop_at_first_failure,
            )

        if self.sandbox_slots is None:
            return await asyncio.to_thread(run)
        async with self.sandbox_slots:
            return await asyncio.to_thread(run)
