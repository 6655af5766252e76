"""Recorded traces on disk, so ``memdoor trace ID`` can read a run back from another process.

One JSON file per trace: ``$MEMDOOR_HOME/traces/<id>.json`` (``$MEMDOOR_HOME`` defaults to
``~/.cache/memdoor``). Files are written whole, then renamed into place, so a reader never sees half.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from memdoor.core.errors import UsageError
from memdoor.core.trace import Trace

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class TraceRecord(BaseModel):
    """A trace with the final answer of the run it belongs to."""

    trace: Trace = Field(description="Every event of the run, in order.")
    final: dict[str, Any] | None = Field(default=None, description="The final answer as stored in memory.")


def default_trace_dir(environ: dict[str, str] | None = None) -> Path:
    """``$MEMDOOR_HOME/traces`` (``$MEMDOOR_HOME`` defaults to ``~/.cache/memdoor``)."""
    env = os.environ if environ is None else environ
    home = env.get("MEMDOOR_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".cache" / "memdoor") / "traces"


def _path(directory: Path, trace_id: str) -> Path:
    if not _ID.match(trace_id) or trace_id.startswith("."):
        raise UsageError(f"bad trace id {trace_id!r}")
    return directory / f"{trace_id}.json"


def save_trace(directory: Path, record: TraceRecord) -> Path:
    """Write ``record`` to ``directory/<id>.json`` atomically; returns the path."""
    path = _path(directory, record.trace.id)
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(record.model_dump_json())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_trace(directory: Path, trace_id: str) -> TraceRecord:
    """The record saved as ``trace_id``; a UsageError when there is none or it cannot be read."""
    path = _path(directory, trace_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no trace {trace_id!r} in {directory}") from None
    except OSError as e:
        raise UsageError(f"cannot read trace {path}: {e}") from None
    try:
        return TraceRecord.model_validate_json(text)
    except ValidationError as e:
        raise UsageError(f"trace file {path} is damaged: {e.error_count()} problem(s)") from None
