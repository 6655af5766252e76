"""What each agent reviews: the diff split per file, each file's hunks with the code around them.

A part is one file: its diff and, from the changed copy of the repository, the lines around each hunk
numbered as in the changed file (so agents name lines the patch can use). A part that would not fit
``max_chars`` gets less surrounding code; if even its bare diff does not fit, it is skipped and the
report says so. Deleted files are skipped (nothing of them is left to review), and so is what changes
without a hunk (a mode, a pure rename). The copy is read with :mod:`memdoor.review.files`: a link is
shown as a link with its target text, never followed; only regular files of bounded size are read.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.review.diff import FileDiff
from memdoor.review.files import inspect, read_text

CONTEXT_LINES = (20, 5, 0)
"""Surrounding lines tried per hunk, most first, until the part fits."""


class Part(BaseModel):
    """One file of the diff, as an agent sees it."""

    file: str
    diff: str
    code: str = Field(default="", description="Numbered lines around the hunks, from the changed file.")


class Skipped(BaseModel):
    file: str
    reason: str


def git_lines(text: str) -> list[str]:
    r"""``text``'s lines as git numbers them: split at ``\n`` only (``str.splitlines`` also splits at
    ``\x0c``, ``\x1c``, ``\x85``, ``\u2028``…, which would shift every line after one); a final
    newline ends the last line, it does not start another."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def read_lines(root: Path, rel: str) -> list[str] | None:
    """The lines of ``root/rel`` (None when it is missing, not text, too large, a link or under one:
    :mod:`memdoor.review.files` never follows a link)."""
    text = read_text(root, rel)
    return None if text is None else git_lines(text)


def numbered(lines: list[str], fd: FileDiff, around: int) -> str:
    """Lines of the changed file around each hunk, ``   12 | code``; ``...`` between separate spans."""
    spans: list[list[int]] = []
    for h in fd.hunks:
        lo = max(1, h.new_start - around)
        hi = min(len(lines), h.new_start + max(h.new_len, 1) - 1 + around)
        if spans and lo <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    width = len(str(len(lines))) if lines else 1
    out: list[str] = []
    for lo, hi in spans:
        if out:
            out.append("...")
        out += [f"{n:>{width}} | {lines[n - 1]}" for n in range(lo, hi + 1)]
    return "\n".join(out)


def skipped_unread(fd: FileDiff, max_chars: int) -> str | None:
    """Why ``fd`` is skipped whatever the changed tree holds (deleted, its diff too long, no hunk), or
    None."""
    if fd.deleted:
        return "deleted by the diff"
    if len(fd.text) > max_chars:
        return f"its diff ({len(fd.text)} characters) exceeds {max_chars}"
    return None if fd.hunks else fd.without_hunks()


def build_parts(files: list[FileDiff], changed: Path, max_chars: int) -> tuple[list[Part], list[Skipped]]:
    """The parts to review and the files skipped (with why), in diff order."""
    parts: list[Part] = []
    skipped: list[Skipped] = []
    for fd in files:
        why = skipped_unread(fd, max_chars)
        if why is not None:
            skipped.append(Skipped(file=fd.path, reason=why))
            continue
        entry = inspect(changed, fd.path)
        if entry.link is not None:  # shown as what it is: a link and its target text, never followed
            code = f"(a symbolic link to {entry.link!r}; the review does not follow links)"
            parts.append(Part(file=fd.path, diff=fd.text, code=code))
            continue
        if entry.text is None:
            skipped.append(Skipped(file=fd.path, reason=f"not read after the change: {entry.reason}"))
            continue
        lines = git_lines(entry.text)
        for around in CONTEXT_LINES:
            code = numbered(lines, fd, around)
            if len(fd.text) + len(code) <= max_chars:
                break
        else:
            code = ""
        parts.append(Part(file=fd.path, diff=fd.text, code=code))
    return parts, skipped
