"""Server-sent events in OpenAI's ``chat.completion.chunk`` format.

The stream of one team run:

1. a chunk with ``delta.role = "assistant"``;
2. progress while the team works, one line per trace event (model calls' start and end left out;
   events that come together share a chunk) — as ``delta.reasoning_content`` (the
   field reasoning models use; chat clients show it as the model's thinking and never mix it into
   the answer), or as SSE comments (``: ...``, ignored by every SSE client), or nothing;
   a ``: keep-alive`` comment after ``heartbeat_s`` of silence, so proxies keep the connection;
3. the answer as one ``delta.content`` chunk, then a chunk with ``finish_reason: "stop"`` (carrying
   the ``memdoor`` summary), then — when the client asked ``stream_options.include_usage`` — a chunk
   with no choices and the whole team's ``usage``;
4. ``data: [DONE]``.

An error after the stream started (deadline, token budget, no code) is sent as
``data: {"error": {...}}`` in OpenAI's error shape, which the official clients raise as an APIError.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Literal

from memdoor.core.trace import TraceEvent
from memdoor.run.live import describe
from memdoor.server.admission import Ticket
from memdoor.server.errors import APIError, InternalError
from memdoor.server.schema import chunk_body
from memdoor.server.service import ServedRun

log = logging.getLogger("memdoor.serve")

Progress = Literal["reasoning", "comments", "none"]

QUIET = frozenset({"call", "answer"})
"""Trace events not shown as progress (each model call's start and end; the trace keeps them)."""


def sse(data: dict[str, Any] | str) -> bytes:
    """One ``data:`` event."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()


def comment(text: str) -> bytes:
    """One SSE comment line (clients ignore it)."""
    return f": {' '.join(text.split())}\n\n".encode()


def progress_line(ev: TraceEvent) -> str:
    """``[  3.2s] agent1 draft: round 0: 12 lines of code, 2/2 public tests passed``."""
    who = f"{ev.agent} " if ev.agent else ""
    return f"[{ev.t:6.1f}s] {who}{ev.kind}: {describe(ev)}"


async def team_stream(
    *,
    task: asyncio.Task[ServedRun],
    events: asyncio.Queue[TraceEvent],
    ticket: Ticket,
    completion_id: str,
    created: int,
    model: str,
    progress: Progress,
    heartbeat_s: float,
    include_usage: bool,
) -> AsyncIterator[bytes]:
    """The events of one run (see the module docs). Cancels the run if the client goes away."""

    def chunk(delta: dict[str, Any] | None, **kw: Any) -> bytes:
        return sse(chunk_body(id=completion_id, created=created, model=model, delta=delta, **kw))

    def shown(evs: list[TraceEvent]) -> bytes | None:
        lines = [progress_line(ev) for ev in evs if ev.kind not in QUIET]
        if not lines or progress == "none":
            return None
        if progress == "reasoning":
            return chunk({"reasoning_content": "".join(line + "\n" for line in lines)})
        return b"".join(comment(line) for line in lines)

    def drain(first: list[TraceEvent]) -> list[TraceEvent]:
        while not events.empty():  # events that came together go out in one chunk
            first.append(events.get_nowait())
        return first

    getter: asyncio.Future[TraceEvent] | None = None
    try:
        yield chunk({"role": "assistant", "content": ""})
        while True:
            if getter is None:
                getter = asyncio.ensure_future(events.get())
            done, _ = await asyncio.wait(
                {getter, task}, timeout=heartbeat_s, return_when=asyncio.FIRST_COMPLETED
            )
            if getter in done:
                out = shown(drain([getter.result()]))
                getter = None
                if out is not None:
                    yield out
            elif task in done:
                out = shown(drain([]))
                if out is not None:
                    yield out
                break
            elif not done:
                yield comment("keep-alive")
        try:
            outcome = task.result()
        except APIError as e:
            yield sse(e.body())
            return
        except Exception:
            log.exception("team run failed")
            yield sse(InternalError("internal error while the team worked; see the server log").body())
            return
        yield chunk({"content": outcome.content()})
        yield chunk({}, finish_reason="stop", extra=outcome.metadata())
        if include_usage:
            yield chunk(None, usage=outcome.usage())
        yield sse("[DONE]")
    finally:
        if getter is not None:
            getter.cancel()
        if not task.done():  # the client went away: stop the team (its run records the trace)
            task.cancel()
        ticket.release()
