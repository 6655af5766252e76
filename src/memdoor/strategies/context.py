"""What a strategy gets besides the problem and the team: a judge, memory, selector, budget, ledger, trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdoor.agents.calls import CallContext

if TYPE_CHECKING:
    from memdoor.core.protocols import CodeRunner, Memory, Selector


@dataclass(kw_only=True)
class RunContext(CallContext):
    """Everything a strategy may use on one problem. One per (problem, strategy) run; never shared.

    A :class:`~memdoor.agents.calls.CallContext` (budget, ledger, trace, price, events: what an agent's
    call needs) with the strategy's own ports: ``judge`` runs code on tests (a
    :class:`memdoor.judging.judge.Judge`: off the event loop, within the sandbox slots; a strategy never
    touches the sandbox itself), ``memory`` is required (the team shares drafts through it), and
    ``selector`` chooses among candidates.
    """

    judge: CodeRunner
    memory: Memory
    selector: Selector
