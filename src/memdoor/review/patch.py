"""One patch from the consensus findings' suggested changes, against the changed code.

A suggestion replaces the whole lines ``line..end_line`` of its file. Suggestions are taken most
severe first; one that overlaps a suggestion already taken, or names lines the file does not have, is
left out and the patch says why. The patch is a unified diff (``a/``, ``b/`` paths) that ``git apply``
accepts; whether it is any good is for the test command to say (:mod:`memdoor.review.testrun`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.review.consensus import Group
from memdoor.review.context import git_lines
from memdoor.review.files import read_text
from memdoor.review.testrun import TestRun


class Patch(BaseModel):
    """The team's patch and the test result it is offered with."""

    diff: str = Field(description="Unified diff against the changed code.")
    findings: list[int] = Field(
        description="Indexes (in the consensus findings) of the suggestions it holds."
    )
    left_out: list[str] = Field(default_factory=list, description="Suggestions not in it, and why.")
    tests: TestRun | None = Field(
        default=None, description="The test command on the patched copy; None: no --test."
    )


def _file_diff(path: str, before: list[str], after: list[str], *, final_newline: bool = True) -> str:
    """A unified diff of one file; ``final_newline`` False: its last line has none (before and after)."""
    a = [line + "\n" for line in before]
    b = [line + "\n" for line in after]
    if not final_newline:
        for side in (a, b):
            if side:
                side[-1] = side[-1][:-1]
    out = []
    for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def assemble(groups: Sequence[Group], changed: Path) -> Patch | None:
    """The patch of the suggestions of ``groups`` (consensus findings) against the files in ``changed``;
    None when no suggestion can be applied (and nothing was left out)."""
    taken: dict[str, list[tuple[int, int, list[str]]]] = {}
    used: list[int] = []
    left_out: list[str] = []
    text_of: dict[str, str | None] = {}
    lines_of: dict[str, list[str] | None] = {}
    for i, g in enumerate(groups):
        if g.suggestion is None:
            continue
        if g.file not in lines_of:
            text_of[g.file] = read_text(changed, g.file)  # never through a link (files.py)
            lines_of[g.file] = None if text_of[g.file] is None else git_lines(str(text_of[g.file]))
        lines = lines_of[g.file]
        where = f"{g.file}:{g.line}-{g.end_line}"
        if lines is None:
            left_out.append(f"{where}: the file is not readable text")
            continue
        if g.end_line > len(lines):
            left_out.append(f"{where}: the file has {len(lines)} lines")
            continue
        spans = taken.setdefault(g.file, [])
        if any(g.line <= hi and lo <= g.end_line for lo, hi, _ in spans):
            left_out.append(f"{where}: overlaps a suggestion already in the patch")
            continue
        spans.append((g.line, g.end_line, g.suggestion.rstrip("\n").split("\n") if g.suggestion else []))
        used.append(i)
    parts = []
    for path, spans in sorted(taken.items()):
        before = lines_of[path] or []
        after = list(before)
        for lo, hi, new in sorted(spans, reverse=True):
            after[lo - 1 : hi] = new
        if after != before:
            text = text_of[path] or ""
            parts.append(_file_diff(path, before, after, final_newline=not text or text.endswith("\n")))
    if not parts:
        if not left_out and not used:
            return None
        left_out += [f"{groups[i].file}:{groups[i].line}: the suggestion changes nothing" for i in used]
        return Patch(diff="", findings=[], left_out=left_out)
    return Patch(diff="".join(parts), findings=used, left_out=left_out)
