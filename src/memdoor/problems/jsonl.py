"""Reading JSON Lines files of objects, with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdoor.core.errors import ProblemFormatError


def parse_json(text: str | bytes) -> Any:
    """``json.loads``, with ValueError (never RecursionError) for a value nested too deeply to parse.

    Python's decoder recurses once per nesting level; past the interpreter's recursion limit (about
    1,000 levels) it raises RecursionError, which callers would not expect from bad input.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def parse_object(line: str, path: str | Path, line_no: int) -> dict[str, Any]:
    """One line's JSON object; ProblemFormatError naming the file and line for anything else."""
    try:
        row = parse_json(line)
    except ValueError as e:
        raise ProblemFormatError(str(path), line_no, None, f"not JSON ({e})") from None
    if not isinstance(row, dict):
        raise ProblemFormatError(str(path), line_no, None, "a line must hold a JSON object")
    return row


def iter_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line; ProblemFormatError for anything else."""
    path = str(path)
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as e:
        raise ProblemFormatError(path, None, None, f"cannot read: {e.strerror or e}") from None
    with handle:
        try:
            for line_no, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = parse_json(line)
                except ValueError as e:
                    raise ProblemFormatError(path, line_no, None, f"not JSON ({e})") from None
                if not isinstance(row, dict):
                    raise ProblemFormatError(path, line_no, None, "a line must hold a JSON object")
                yield line_no, row
        except UnicodeDecodeError as e:
            raise ProblemFormatError(path, None, None, f"not UTF-8 text ({e.reason})") from None
        except OSError as e:  # a folder, a device that fails mid-read
            raise ProblemFormatError(path, None, None, f"cannot read: {e.strerror or e}") from None
