"""What many runs share (:class:`RunEnv`: models, sandbox, memory, prices, slots) and its one
builder, :func:`open_env`, which closes exactly what it opened."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdoor.core.ledger import PriceFn, unpriced
from memdoor.core.protocols import Memory, Sandbox
from memdoor.core.trace import TraceEvent
from memdoor.models.pool import ModelPool
from memdoor.run.tracestore import TraceRecord
from memdoor.select.calibration import Calibration, load_default

if TYPE_CHECKING:
    from memdoor.sandbox.config import SandboxConfig


@dataclass
class RunEnv:
    """What many problems share: models, sandbox, memory, prices, an event sink and the trace folder.

    Built once (see :func:`open_env`) and passed to every :func:`solve_problem` call.
    """

    pool: ModelPool
    sandbox: Sandbox
    memory: Memory
    price: PriceFn = unpriced
    on_event: Callable[[TraceEvent], None] | None = None
    trace_dir: Path | None = None
    sandbox_slots: asyncio.Semaphore | None = None
    on_start: Callable[[str], None] | None = None
    """Called with the run's trace id as each run starts, before anything else."""
    calibration: Calibration | None = None
    """The estimate of an answer being correct (``Solution.p_correct``); None: answers carry none."""
    grade_drafts: bool = False
    """Grade every distinct candidate too (``Solution.draft_verdicts``), for a report's draft records."""
    on_record: Callable[[TraceRecord, Path | None], None] | None = None
    """Called with each run's trace record as it is saved, and the trace file it went to (None: none)."""


@contextlib.asynccontextmanager
async def open_env(
    *,
    memory_url: str | None = None,
    memory_options: dict[str, Any] | None = None,
    sandbox: Sandbox | None = None,
    sandbox_config: SandboxConfig | None = None,
    pool: ModelPool | None = None,
    price: PriceFn | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    trace_dir: Path | None = None,
    slots: int | None = None,
) -> AsyncIterator[RunEnv]:
    """The one builder of a :class:`RunEnv` (for solve, bench, serve and workers).

    Opens what it is not given — a model pool, the memory at ``memory_url`` (``memory_options`` go to
    :func:`memdoor.memory.open_memory`), a sandbox (``sandbox_config`` or the defaults) — and on exit
    closes exactly what it opened, last opened first, also when opening a later part failed. Parts
    given are the caller's to close. ``slots``: candidates running at once over every run of the env
    (None: no cap beyond the sandbox's own).
    """
    from memdoor.memory import open_memory

    async with contextlib.AsyncExitStack() as stack:
        if pool is None:
            pool = ModelPool()
            stack.push_async_callback(pool.aclose)
        memory = open_memory(memory_url, **(memory_options or {}))
        stack.push_async_callback(memory.aclose)
        if sandbox is None:
            from memdoor.sandbox import SandboxConfig, open_sandbox

            sandbox = stack.enter_context(open_sandbox(sandbox_config or SandboxConfig()))
        yield RunEnv(
            pool=pool,
            sandbox=sandbox,
            memory=memory,
            price=price or default_price(),
            on_event=on_event,
            trace_dir=trace_dir,
            sandbox_slots=asyncio.Semaphore(slots) if slots else None,
            calibration=load_default(),
        )


def default_price() -> PriceFn:
    """Prices from the built-in table and ``$MEMDOOR_PRICES`` (unknown models are unpriced)."""
    from memdoor.models.prices import load_prices

    return load_prices().price
