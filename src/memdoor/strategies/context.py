"""What a strategy gets besides the problem and the team: a judge, memory, selector, budget, ledger, trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdoor.budget import BudgetTracker
from memdoor.ledger import Ledger, PriceFn, unpriced
from memdoor.trace import Trace, TraceEvent

if TYPE_CHECKING:
    from memdoor.protocols import CodeRunner, Memory, Selector


@dataclass
class RunContext:
    """Everything a strategy may use on one problem. One per (problem, strategy) run; never shared.

    ``judge`` runs code on tests (a :class:`memdoor.judge.Judge`: off the event loop, within the
    sandbox slots); a strategy never touches the sandbox itself.
    """

    judge: CodeRunner
    memory: Memory
    selector: Selector
    budget: BudgetTracker = field(default_factory=BudgetTracker)
    ledger: Ledger = field(default_factory=Ledger)
    trace: Trace = field(default_factory=Trace)
    price: PriceFn = unpriced
    on_event: Callable[[TraceEvent], None] | None = None

    @property
    def task_id(self) -> str:
        return self.trace.id

    async def event(self, kind: str, agent: str | None = None, **data: Any) -> None:
        """Record a step in the trace and in the shared memory's timeline."""
        ev = self.trace.add(kind, agent, **data)
        await self.memory.append(self.task_id, "timeline", ev.model_dump())
        if self.on_event is not None:
            self.on_event(ev)
