"""Print a recorded trace as a readable timeline: who drafted, reviewed, what ran, how the vote went.

Traces are read from $MEMDOOR_HOME/traces/ID.json (default ~/.cache/memdoor/traces), where
``memdoor solve`` keeps them, or from a team memory in Redis with --redis URL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from memdoor.core.errors import UsageError
from memdoor.core.trace import Trace, TraceEvent
from memdoor.run.live import render_record
from memdoor.run.tracestore import TraceRecord, default_trace_dir, load_trace


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


def run(args: argparse.Namespace) -> int:
    if args.redis:
        record = asyncio.run(read_from_memory(args.redis, args.trace_id))
    else:
        record = load_trace(args.dir or default_trace_dir(), args.trace_id)
    if args.json:
        print(json.dumps(record.model_dump(mode="json")))
    else:
        print(render_record(record, code=args.code))
    return 0
