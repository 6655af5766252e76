"""Reading a unified diff (``git diff`` or ``diff -u``) into files and hunks, with git's own line rules.

Lines end at ``\\n`` only (as for git, a ``\\r`` or form feed is part of its line). A file starts
where ``git apply`` starts one: a ``diff --git`` line followed by git's extended header lines
(``index``, ``old mode``, ``rename from``, ``---``, ``+++``, …), or a ``---`` line, a ``+++`` line and an
``@@ -`` line; its hunks are read by their line counts. Text git ignores (a commit message, free text
between ``diff --git`` and ``---``) belongs to no file, so it never reaches a prompt: a file's
``text`` holds only its header and hunks, and its header is written anew from the values read (names,
modes, object names, similarity), never copied (issue 41, class 3): what git ignores on a header line (a
``diff --git`` line whose names it does not use, text after a mode or a similarity, a timestamp after a
tab) is not in it. What git changes without a hunk (a mode, a pure rename or copy, an empty file) is a
file without hunks: it is listed as skipped, never dropped.

Which files git changes is git's to say (:func:`memdoor.review.repo.git_changes`); the review checks
that this reading agrees (:func:`memdoor.review.repo.check_agreement`) and refuses the diff if not.

Refused with :class:`ReviewInputError` (one line, exit 2): text that is not a unified diff, a binary
diff, a diff larger than ``max_bytes``, and paths that leave the repository (absolute, ``..``), hold
control characters, or are deeper or longer than :data:`MAX_PATH_DEPTH` / :data:`MAX_PATH_CHARS`; a mode
git refuses (``100644x``), an ``index`` line whose object names are not hexadecimal, a header line given
twice in one file (git never writes one; which one counts is not clear), a hunk header with a number of
more than :data:`MAX_DIGITS` digits after its leading zeros. Numbers are read as git's ``strtoul`` reads
them (ASCII digits, leading zeros included; a similarity over 100 is ignored, a mode too large for it is
all ones), never by ``int()`` on unbounded decimal text (Python refuses more than 4,300 digits with a
ValueError).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from memdoor.core.errors import ReviewInputError

MAX_DIFF_BYTES = 2_000_000
"""The largest diff accepted (bytes); beyond it the review is refused rather than silently truncated."""
MAX_PATH_DEPTH = 32
"""Most directories (components) in a path the diff names; deeper is refused."""
MAX_PATH_CHARS = 1024
"""Longest path the diff may name (characters); one component is at most 255 bytes."""
MAX_NAME_BYTES = 255

LINK_MODE = "120000"
"""git's mode of a symbolic link (its content is the link's target text)."""

MAX_DIGITS = 18
"""Most digits of a hunk header's line number or count after its leading zeros (a larger one is refused: no
file has that many lines, and Python's int() refuses numbers of more than 4,300 digits)."""
_NUM = rf"0*([1-9][0-9]{{0,{MAX_DIGITS - 1}}}|0)"
"""A hunk number: leading zeros read as git's strtoul reads them, never counted. The zeros split one way
only (``0*([0-9]{1,18})`` could split them 18 ways per number: a header failing late backtracked through
them all, seconds for one line of 5,000 zeros)."""
_HUNK = re.compile(rf"@@ -{_NUM}(?:,{_NUM})? \+{_NUM}(?:,{_NUM})? @@")
_EXTENDED = (  # git's extended header lines (apply.c), in the order git tries them
    "--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ", "new file mode ", "copy from ",
    "copy to ", "rename old ", "rename new ", "rename from ", "rename to ", "similarity index ",
    "dissimilarity index ", "index ",
)  # fmt: skip
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, "\\": 92, '"': 34}
_MODE = re.compile(r"[ \t\n\v\f\r]*([0-7]+)(?:[ \t\r]|$)")  # git's strtoul(…, 8) then a space or the end
_OID = re.compile(r"[0-9a-fA-F]{1,64}")
_SCORE = re.compile(r"[ \t\n\v\f\r]*\+?([0-9]+)")  # git's strtoul(…, 10): a score over 100 is ignored
ULONG_MAX = 2**64 - 1
"""What git's strtoul gives for a number too large for it."""


class Hunk(BaseModel):
    """One ``@@`` section: where it sits in the old and new file, and its lines (with their ``+ -`` marks)."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[str] = Field(
        default_factory=list, description="Body lines, each starting with ' ', '+' or '-'."
    )

    def numbered(self) -> list[tuple[str, int]]:
        """Each body line's mark (``' '``, ``'+'``, ``'-'``) with its new-file line number (a deleted line:
        the number of the new line that follows it)."""
        out, n = [], self.new_start
        for line in self.lines:
            out.append((line[:1], n))
            if not line.startswith("-"):
                n += 1
        return out

    def added(self) -> list[int]:
        """New-file line numbers of the added lines."""
        return [n for mark, n in self.numbered() if mark == "+"]


class FileDiff(BaseModel):
    """The changes of one file."""

    path: str = Field(description="Path in the new tree (the old path for a deleted file).")
    old_path: str | None = Field(default=None, description="Path in the old tree; None for a new file.")
    deleted: bool = False
    hunks: list[Hunk] = Field(default_factory=list)
    text: str = Field(default="", description="This file's header lines and hunks (no free text).")
    old_mode: str | None = Field(default=None, description="git's mode before (e.g. 100644), when given.")
    new_mode: str | None = Field(default=None, description="git's mode after (120000: a symbolic link).")
    copied: bool = Field(default=False, description="A copy of old_path (git's 'copy from').")

    @property
    def added_lines(self) -> int:
        return sum(len(h.added()) for h in self.hunks)

    @property
    def deleted_lines(self) -> int:
        return sum(line.startswith("-") for h in self.hunks for line in h.lines)

    @property
    def is_link(self) -> bool:
        """Whether the diff makes this path a symbolic link."""
        return self.new_mode == LINK_MODE

    def without_hunks(self) -> str:
        """What git changes in a file without hunks, for the list of skipped files."""
        if self.old_path is not None and self.old_path != self.path:
            how = "copied" if self.copied else "renamed"
            return f"{how} from {self.old_path}, content unchanged"
        if self.old_mode and self.new_mode and self.old_mode != self.new_mode:
            return f"mode changed from {self.old_mode} to {self.new_mode}, content unchanged"
        if self.deleted:
            return "an empty file deleted by the diff"
        if self.old_path is None:
            return "a new empty file"
        return "a file header without a change"


def _unquote(raw: str) -> tuple[str, str]:
    """A C-quoted name at the start of ``raw`` (git's quoting) and the rest of ``raw``."""
    out, i = bytearray(), 1
    while i < len(raw):
        c = raw[i]
        if c == '"':
            try:
                return out.decode("utf-8"), raw[i + 1 :]
            except UnicodeDecodeError:
                raise ReviewInputError(f"the diff names a path that is not UTF-8: {raw[: i + 1]!r}") from None
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
        elif raw[i + 1 : i + 2] in _ESCAPES:
            out.append(_ESCAPES[raw[i + 1]])
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", raw[i + 1 : i + 4]):
            out.append(int(raw[i + 1 : i + 4], 8))
            i += 4
        else:
            raise ReviewInputError(f"the diff names a badly quoted path: {raw[:80]!r}")
    raise ReviewInputError(f"the diff names a badly quoted path: {raw[:80]!r}")


def _strip(name: str, components: int) -> str:
    """``name`` without its first ``components`` directories (git's ``-p``), or as it is when it has fewer."""
    parts = name.split("/", components)
    return parts[-1] if len(parts) > components else name


def _name(raw: str, components: int = 1) -> str | None:
    """The path of a ``---``/``+++``/``rename from`` line's rest: unquoted, up to a tab, without its first
    ``components`` directories; None for ``/dev/null``."""
    if raw.startswith('"'):
        name, _ = _unquote(raw)
    else:
        name = raw.split("\t")[0]
        if name == "/dev/null" or (raw.startswith("/dev/null") and raw[9:10].isspace()):
            return None
    if name.startswith("/"):
        raise ReviewInputError(f"the diff names a path outside the repository: {name[:80]!r}")
    return check_path(_strip(name, components))


def check_path(raw: str) -> str:
    """``raw`` when it is a path the review can take, else ReviewInputError (one line)."""
    parts = raw.split("/")
    if not raw or raw.startswith("/") or ".." in parts:
        raise ReviewInputError(f"the diff names a path outside the repository: {raw!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise ReviewInputError(f"the diff names a path with control characters: {raw[:80]!r}")
    if len(parts) > MAX_PATH_DEPTH:
        raise ReviewInputError(
            f"the diff names a path deeper than the review takes ({len(parts)} levels; the limit is "
            f"{MAX_PATH_DEPTH}): {raw[:60]!r}…"
        )
    if len(raw) > MAX_PATH_CHARS or any(
        len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for p in parts
    ):
        raise ReviewInputError(
            f"the diff names a path longer than the review takes ({len(raw)} characters; the limit is "
            f"{MAX_PATH_CHARS}, {MAX_NAME_BYTES} bytes per name): {raw[:60]!r}…"
        )
    return "/".join(p for p in parts if p not in ("", "."))


def _header_names(rest: str) -> tuple[str | None, str | None]:
    """The two names of a ``diff --git`` line (after ``diff --git ``), as git finds them: quoted, or the
    split of the line into two names that are the same once their first directory is gone."""
    if len(rest) > 2 * MAX_PATH_CHARS + 8:
        return None, None  # longer than two paths the review takes: git's --- and +++ lines must say
    if rest.startswith('"'):
        a, tail = _unquote(rest)
        tail = tail.lstrip(" ")
        b = _unquote(tail)[0] if tail.startswith('"') else tail
        return check_path(_strip(a, 1)), check_path(_strip(b, 1))
    for k, c in enumerate(rest):
        if c == " " and _strip(rest[:k], 1) == _strip(rest[k + 1 :], 1) and "/" in rest[:k]:
            name = check_path(_strip(rest[:k], 1))
            return name, name
    return None, None


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
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            raise ReviewInputError(f"binary diff ({line.strip()[:80]}): only text changes can be reviewed")
        if _HUNK.match(line):
            raise ReviewInputError(f"not a unified diff: a hunk without a file header at line {i + 1}")
        if line.startswith("diff --git "):
            i = _read_git(lines, i, files)
        elif (
            line.startswith("--- ")
            and i + 2 < len(lines)
            and lines[i + 1].startswith("+++ ")
            and lines[i + 2].startswith("@@ -")
        ):
            old, new = _name(line[4:]), _name(lines[i + 1][4:])
            if old is None and new is None:
                raise ReviewInputError("not a unified diff: a file goes from /dev/null to /dev/null")
            fd = FileDiff(path=new or old or "", old_path=old, deleted=new is None)
            i = _read_hunks(lines, i + 2, fd, _names(fd), files)
        else:
            i += 1
    if not files:
        raise ReviewInputError("not a unified diff: no '--- a/FILE' / '+++ b/FILE' header with a '@@' hunk")
    return files


def _read_git(lines: list[str], i: int, files: list[FileDiff]) -> int:
    """One ``diff --git`` file: its extended header lines, then its hunks; the index after them. A
    ``diff --git`` line with no header line after it is ignored, as git ignores it."""
    start, j = i, i + 1
    values: dict[str, str] = {}
    while j < len(lines) and not lines[j].startswith("@@ -"):
        key = next((k for k in _EXTENDED if lines[j].startswith(k)), None)
        if key is None:
            break
        if key in values:
            raise ReviewInputError(
                f"not a unified diff: line {j + 1} repeats a git header line: {lines[j][:60]!r}"
            )
        values[key] = lines[j][len(key) :]
        j += 1
    if j == start + 1 and not (j < len(lines) and lines[j].startswith("@@ -")):
        return start + 1
    a, b = _header_names(lines[start][len("diff --git ") :])
    src = values.get("rename from ", values.get("rename old ", values.get("copy from ")))
    dst = values.get("rename to ", values.get("rename new ", values.get("copy to ")))
    old = _name(values["--- "]) if "--- " in values else (_name(src, 0) if src is not None else a)
    new = _name(values["+++ "]) if "+++ " in values else (_name(dst, 0) if dst is not None else b)
    if "new file mode " in values:
        old = None
    if "deleted file mode " in values:
        new = None
    if old is None and new is None:
        raise ReviewInputError(f"not a unified diff: line {start + 1}: a git header without file names")
    modes = {k: _mode(v, start + 1) for k, v in values.items() if k.endswith("mode ")}
    index = _index(values["index "], start + 1) if "index " in values else None
    index_mode = index[2] if index else None
    fd = FileDiff(
        path=new or old or "",
        old_path=old,
        deleted=new is None,
        old_mode=modes.get("old mode ", modes.get("deleted file mode ", index_mode)),
        new_mode=modes.get("new mode ", modes.get("new file mode ", index_mode)),
        copied="copy from " in values,
    )
    return _read_hunks(lines, j, fd, _git_header(fd, values, modes, index), files)


def _mode(raw: str, line: int) -> str:
    """A header line's mode as git reads it (octal digits, then a space or the line's end; what follows is
    ignored), canonical as git makes it (a regular file 100644 or 100755, 120000, 040000, 160000)."""
    m = _MODE.match(raw)
    if not m:
        raise ReviewInputError(
            f"not a unified diff: the git header at line {line} has a bad mode: {raw[:40]!r}"
        )
    mode = min(int(m[1], 8), ULONG_MAX) & 0xFFFFFFFF  # strtoul's overflow, kept in git's unsigned int
    kind = mode & 0o170000
    regular = 0o100755 if mode & 0o100 else 0o100644
    return f"{regular if kind == 0o100000 else kind if kind in (0o120000, 0o040000) else 0o160000:06o}"


def _index(raw: str, line: int) -> tuple[str, str, str | None] | None:
    """An ``index`` line's object names and mode, None when git ignores the line (no ``..``, a name longer
    than an object name)."""
    old, dots, rest = raw.partition("..")
    if not dots or "." in old or len(old) > 64:
        return None
    new, space, mode = rest.partition(" ")
    if len(new) > 64:
        return None
    if not (_OID.fullmatch(old) and _OID.fullmatch(new)):
        raise ReviewInputError(
            f"not a unified diff: the git header at line {line} names objects that are not hexadecimal: "
            f"{raw[:40]!r}"
        )
    return old, new, _mode(mode, line) if space else None


def _shown(name: str) -> str:
    """A name as git reads it in a header: quoted when it holds a space, a quote or a backslash."""
    if not any(c in name for c in ' "\\'):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _names(fd: FileDiff) -> list[str]:
    """The ``---``/``+++`` lines of ``fd``, from its names."""
    old = "/dev/null" if fd.old_path is None else _shown("a/" + fd.old_path)
    new = "/dev/null" if fd.deleted else _shown("b/" + fd.path)
    return [f"--- {old}", f"+++ {new}"]


def _git_header(
    fd: FileDiff, values: dict[str, str], modes: dict[str, str], index: tuple[str, str, str | None] | None
) -> list[str]:
    """The header of a ``diff --git`` file written from what was read: git reads it as it read the
    original, and nothing git ignores on those lines is in it."""
    old, new = fd.old_path or fd.path, fd.path
    out = [f"diff --git {_shown('a/' + old)} {_shown('b/' + new)}"]
    out += [
        f"{k}{modes[k]}"
        for k in ("old mode ", "new mode ", "deleted file mode ", "new file mode ")
        if k in modes
    ]
    for key in ("similarity index ", "dissimilarity index "):
        score = _SCORE.match(values.get(key, ""))
        digits = (score[1].lstrip("0") or "0") if score else ""
        if digits and len(digits) <= 3 and int(digits) <= 100:  # git ignores a larger score
            out.append(f"{key}{int(digits)}%")
    if any(k.startswith(("rename ", "copy ")) for k in values) and old != new:
        how = "copy" if fd.copied else "rename"
        out += [f"{how} from {_shown(old)}", f"{how} to {_shown(new)}"]
    if index is not None:
        out.append(f"index {index[0]}..{index[1]}" + (f" {index[2]}" if index[2] else ""))
    return out + (_names(fd) if "--- " in values or "+++ " in values else [])


def _read_hunks(lines: list[str], i: int, fd: FileDiff, header: list[str], files: list[FileDiff]) -> int:
    """Read the hunks of ``fd`` starting at line ``i`` (each by its line counts, as git does); the index
    after them. ``fd.text`` is ``header`` and these lines, nothing else."""
    start = i
    while i < len(lines) and lines[i].startswith("@@ -"):
        m = _HUNK.match(lines[i])
        if not m:
            raise ReviewInputError(f"not a unified diff: {fd.path}: bad hunk header at line {i + 1}")
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
            old_left -= mark != "+"
            new_left -= mark != "-"
            hunk.lines.append(body or " ")  # some tools strip the space of an empty context line
            i += 1
        if old_left > 0 or new_left > 0:
            raise ReviewInputError(f"not a unified diff: {fd.path}: a hunk ends early (line {i})")
        if i < len(lines) and lines[i].startswith("\\ "):
            i += 1
        fd.hunks.append(hunk)
    fd.text = "\n".join(header + lines[start:i]) + "\n"
    files.append(fd)
    return i
