"""Traces: a timeline of what a team did, readable back from memory (``memdoor trace ID``)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from pydantic import BaseModel, Field


class TraceEvent(BaseModel):
    """One step: an agent drafted, a test ran, a vote was taken..."""

    t: float = Field(description="Seconds since the trace started.")
    kind: str = Field(description="draft, review, repair, run, vote, select, budget, failure, final, ...")
    agent: str | None = Field(default=None, description="Agent id, when an agent did it.")
    data: dict[str, Any] = Field(default_factory=dict, description="Details, JSON-able.")


class Trace(BaseModel):
    """All events of one strategy run on one problem."""

    id: str = Field(
        default_factory=lambda: uuid.uuid4().hex[:16], description="Trace id (also the memory task id)."
    )
    started_at: float = Field(default_factory=time.time, description="Unix time the trace started.")
    events: list[TraceEvent] = Field(default_factory=list)

    def add(self, kind: str, agent: str | None = None, **data: Any) -> TraceEvent:
        ev = TraceEvent(t=round(time.time() - self.started_at, 4), kind=kind, agent=agent, data=data)
        self.events.append(ev)
        return ev
