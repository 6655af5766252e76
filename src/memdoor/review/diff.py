"""Reading a unified diff (``git diff`` or ``diff -u``) into files and hunks; refusing what cannot be reviewed.

Refused with :class:`ReviewInputError` (one line, exit 2): text that is not a unified diff, a binary
diff, a diff larger than ``max_bytes``, and paths that leave the repository (absolute, ``..``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

from memdoor.errors import ReviewInputError

MAX_DIFF_BYTES = 2_000_000
"""The largest diff accepted (bytes); beyond it the review is refused rather than silently truncated."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git (\S+) (\S+)")


class Hunk(BaseModel):
    """One ``@@`` section: where it sits in the old and new file, and its lines (with their ``+ -`` marks)."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[str] = Field(
        default_factory=list, description="Body lines, each starting with ' ', '+' or '-'."
    )

    def added(self) -> list[int]:
        """New-file line numbers of the added lines."""
        out, n = [], self.new_start
        for line in self.lines:
            if line.startswith("+"):
                out.append(n)
            if not line.startswith("-"):
                n += 1
        return out


class FileDiff(BaseModel):
    """The changes of one file."""

    path: str = Field(description="Path in the new tree (the old path for a deleted file).")
    old_path: str | None = Field(default=None, description="Path in the old tree; None for a new file.")
    deleted: bool = False
    hunks: list[Hunk] = Field(default_factory=list)
    text: str = Field(default="", description="This file's part of the diff, as given.")

    @property
    def added_lines(self) -> int:
        return sum(len(h.added()) for h in self.hunks)


def _clean_path(raw: str) -> str | None:
    """``a/src/x.py`` → ``src/x.py``; None for ``/dev/null``; ReviewInputError for a path leaving the repo."""
    raw = raw.split("\t")[0].strip()
    if raw.startswith('"') and raw.endswith('"'):
        raw = raw[1:-1]
    if raw == "/dev/null":
        return None
    if raw[:2] in ("a/", "b/"):
        raw = raw[2:]
    path = PurePosixPath(raw)
    if not raw or path.is_absolute() or ".." in path.parts:
        raise ReviewInputError(f"the diff names a path outside the repository: {raw!r}")
    return str(path)


def _check_text(text: str, max_bytes: int) -> None:
    size = len(text.encode("utf-8", "surrogateescape"))
    if size > max_bytes:
        raise ReviewInputError(
            f"the diff is too large to review ({size} bytes; the limit is {max_bytes}): review it in parts"
        )
    if "\x00" in text:
        raise ReviewInputError("not a unified diff: it contains NUL bytes (binary data)")


def parse_diff(text: str, *, max_bytes: int = MAX_DIFF_BYTES) -> list[FileDiff]:
    """The files of a unified diff, in order. ReviewInputError for anything that cannot be reviewed."""
    _check_text(text, max_bytes)
    files: list[FileDiff] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            raise ReviewInputError(f"binary diff ({line.strip()[:80]}): only text changes can be reviewed")
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            i = _read_file(lines, i, files)
            continue
        i += 1
    if not files:
        raise ReviewInputError("not a unified diff: no '--- a/FILE' / '+++ b/FILE' header with a '@@' hunk")
    return files


def _read_file(lines: list[str], i: int, files: list[FileDiff]) -> int:
    """Read one file's headers and hunks starting at its ``---`` line; the index after them."""
    start = i
    old, new = _clean_path(lines[i][4:]), _clean_path(lines[i + 1][4:])
    if old is None and new is None:
        raise ReviewInputError("not a unified diff: a file goes from /dev/null to /dev/null")
    fd = FileDiff(path=new or old or "", old_path=old, deleted=new is None)
    i += 2
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            break
        hunk = Hunk(
            old_start=int(m[1]),
            old_len=int(m[2]) if m[2] is not None else 1,
            new_start=int(m[3]),
            new_len=int(m[4]) if m[4] is not None else 1,
        )
        i += 1
        old_left, new_left = hunk.old_len, hunk.new_len
        while i < len(lines) and (old_left > 0 or new_left > 0):
            body = lines[i]
            mark = body[:1]
            if mark == "\\":  # "\ No newline at end of file"
                i += 1
                continue
            if mark not in (" ", "+", "-", ""):
                raise ReviewInputError(f"not a unified diff: {fd.path}: hunk line {i + 1} is {body[:40]!r}")
            body = body or " "  # some tools strip the space of an empty context line
            old_left -= mark != "+"
            new_left -= mark != "-"
            hunk.lines.append(body)
            i += 1
        if old_left > 0 or new_left > 0:
            raise ReviewInputError(f"not a unified diff: {fd.path}: a hunk ends early (line {i})")
        while i < len(lines) and lines[i].startswith("\\"):
            i += 1
        fd.hunks.append(hunk)
    if not fd.hunks:
        raise ReviewInputError(f"not a unified diff: {fd.path}: a file header without a '@@' hunk")
    fd.text = "\n".join(_header_before(lines, start) + lines[start:i]) + "\n"
    files.append(fd)
    return i


def _header_before(lines: list[str], start: int) -> list[str]:
    """The ``diff --git``/``index`` lines that belong to the file starting at ``start`` (for its own text)."""
    j = start
    while j > 0 and not lines[j - 1].startswith(("@@", "+", "-", " ")) and not _HUNK.match(lines[j - 1]):
        j -= 1
        if _GIT_HEADER.match(lines[j]):
            return lines[j:start]
    return []
