"""Reading JSON Lines files of objects, with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdoor.errors import ProblemFormatError


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
                    row = json.loads(line)
                except ValueError as e:
                    raise ProblemFormatError(path, line_no, None, f"not JSON ({e})") from None
                if not isinstance(row, dict):
                    raise ProblemFormatError(path, line_no, None, "a line must hold a JSON object")
                yield line_no, row
        except UnicodeDecodeError as e:
            raise ProblemFormatError(path, None, None, f"not UTF-8 text ({e.reason})") from None
