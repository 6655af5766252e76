"""What one agent call needs: the budget to check and charge, the ledger and price to record its cost, and
the trace (with the shared memory's timeline and the live view) to record what happened.

A strategy's :class:`~memdoor.strategies.context.RunContext` is a call context with a judge and a
selector added; the code review, which has neither, gives its agents a plain one. So the agents layer
needs nothing from the strategies above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdoor.core.budget import BudgetTracker
from memdoor.core.ledger import Ledger, PriceFn, unpriced
from memdoor.core.trace import Trace, TraceEvent

if TYPE_CHECKING:
    from memdoor.core.protocols import Memory


@dataclass(kw_only=True)
class CallContext:
    """The budget, ledger, price and trace of one run. One per run; never shared between runs.

    ``memory``, when given, receives every event in its ``timeline`` log (the trace id is the task id);
    ``on_event`` sees every event as it happens (the live view, a server's stream).
    """

    memory: Memory | None = None
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
        if self.memory is not None:
            await self.memory.append(self.task_id, "timeline", ev.model_dump())
        if self.on_event is not None:
            self.on_event(ev)
