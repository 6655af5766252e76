"""Print a recorded trace as a readable timeline: who drafted, reviewed, what ran, how the vote went.

Traces are read from $MEMDOOR_HOME/traces/ID.json (default ~/.cache/memdoor/traces), where
``memdoor solve`` keeps them, or from a team memory in Redis with --redis URL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from memdoor.errors import UsageError
from memdoor.trace import Trace, TraceEvent
from memdoor.tracestore import TraceRecord, default_trace_dir, load_trace


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace_id", metavar="ID", help="trace id (memdoor solve prints it)")
    p.add_argument("--dir", type=Path, help="folder of trace files (default $MEMDOOR_HOME/traces)")
    p.add_argument("--redis", metavar="URL", help="read the trace from this Redis team memory instead")
    p.add_argument("--code", action="store_true", help="show each draft's code and each review's text")
    p.add_argument("--json", action="store_true", help="print the trace record as JSON")


async def read_from_memory(url: str, trace_id: str) -> TraceRecord:
    """The trace record the runner wrote to the memory at ``url``, else its timeline and final answer."""
    from memdoor.memory import open_memory

    memory = open_memory(url)
    try:
        records = await memory.entries(trace_id, "trace")
        if records:
            return TraceRecord.model_validate(records[-1])
        events = await memory.entries(trace_id, "timeline")
        final = await memory.get_final(trace_id)
    finally:
        await memory.aclose()
    if not events and final is None:
        raise UsageError(f"no trace {trace_id!r} in {url}")
    return TraceRecord(
        trace=Trace(id=trace_id, events=[TraceEvent.model_validate(e) for e in events]), final=final
    )


def render(record: TraceRecord, *, code: bool = False) -> str:
    """The timeline, one line per event, then the final answer."""
    from datetime import datetime

    from memdoor.live import CODE_ROLES, timeline_line

    trace = record.trace
    started = datetime.fromtimestamp(trace.started_at).isoformat(sep=" ", timespec="seconds")
    lines = [f"trace {trace.id} (started {started}, {len(trace.events)} events)"]
    for ev in trace.events:
        lines.append(timeline_line(ev))
        if code and ev.kind in CODE_ROLES and ev.data.get("code"):
            lines += ["          " + row for row in ev.data["code"].splitlines()]
        if code and ev.kind == "review" and ev.data.get("text"):
            lines += ["          | " + row for row in ev.data["text"].splitlines()]
    final = record.final
    if final:
        v = final.get("verdict") or {}
        lines += [
            "",
            f"final: {'PASSED' if final.get('passed') else 'FAILED'} "
            f"({v.get('status', 'not graded')}, {v.get('tests_passed', 0)}/{v.get('tests_total', 0)} tests"
            + ("" if final.get("hidden_tests") else ", public tests only")
            + f"), answer by {final.get('agent') or '-'}, stopped: {final.get('stopped')}",
        ]
        ledger = final.get("ledger") or {}
        lines.append(
            f"cost: {ledger.get('calls', 0)} calls, {ledger.get('prompt_tokens', 0)} + "
            f"{ledger.get('completion_tokens', 0)} tokens, {ledger.get('wall_seconds', 0):.1f} s"
        )
        if final.get("error"):
            lines.append(f"error: {final['error']}")
        if final.get("code"):
            lines += ["```python", final["code"], "```"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.redis:
        record = asyncio.run(read_from_memory(args.redis, args.trace_id))
    else:
        record = load_trace(args.dir or default_trace_dir(), args.trace_id)
    if args.json:
        print(json.dumps(record.model_dump(mode="json")))
    else:
        print(render(record, code=args.code))
    return 0
