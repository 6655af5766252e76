"""Which Rust functions a change altered.

The file is read with its comments, strings and character literals blanked (:mod:`.rustscan`), so braces
in them never count; a top-level ``fn`` (not inside an ``impl``, ``mod`` or ``trait``) is compared by its
text without comments and layout. As for Python, a function whose text is the same but that reads a
top-level ``const``/``static`` whose definition changed counts too. Only functions the harness can call
are compared: not generic, not ``async`` or ``unsafe``, not built only under ``#[cfg]`` or ``#[test]``, and
of parameters all of simple types (:func:`.rust_inputs.simple`); the others are skipped with the reason.
"""

from __future__ import annotations

import re

from memdoor.review.context import Skipped
from memdoor.review.differential.programs import line_literals
from memdoor.review.differential.rust_inputs import simple
from memdoor.review.differential.rustscan import closing, masked, words
from memdoor.review.differential.targets import Changed, changed_lines
from memdoor.sandbox.lang.rust_call import split_commas

_VISIBLE = r"^[ \t]*(?:pub(?:\([^)\n]{0,64}\))?\s+)?"  # at a line's start; bounded: no quadratic search
_HEAD = re.compile(
    _VISIBLE + r"(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\S+\s+)?fn\s+(\w+)\s*([<(])", re.M
)
_VALUE = re.compile(_VISIBLE + r"(?:const|static)\s+(?:mut\s+)?(\w+)\s*:", re.M)
_BODY_OR_END = re.compile(r"[{;]")
_BRACKET_OR_END = re.compile(r"[()\[\]{};]")
_WORD = re.compile(r"\b\w+\b")
MAX_ATTRIBUTE_LINES = 16


def _top(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of ``text`` at brace depth 0."""
    spans, depth, start = [], 0, 0
    for k, c in enumerate(text):
        if c == "{":
            if depth == 0:
                spans.append((start, k))
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = k + 1
    spans.append((start, len(text)))
    return spans


Fn = tuple[int, int, list[tuple[str, str]], str | None]
"""A top-level function: ``(start, end, params, why it cannot be called or None)``."""


def _attributes(text: str, at: int) -> str:
    """The attribute lines right above the line starting at ``at`` in masked ``text`` (blank ones between)."""
    out: list[str] = []
    for _ in range(MAX_ATTRIBUTE_LINES):
        if at == 0:
            break
        start = text.rfind("\n", 0, at - 1) + 1
        line = text[start : at - 1].strip()
        if line and not line.startswith("#["):
            break
        out.append(line)
        at = start
    return " ".join(out)


def _uncallable(text: str, m: re.Match[str]) -> str | None:
    """Why the harness cannot call the function whose head ``m`` matched (None: it can)."""
    head = m.group().split()
    if m.group(2) == "<":
        return "a generic function"
    if "async" in head or "unsafe" in head:
        return "an async or unsafe function"
    attributes = _attributes(text, m.start())
    if re.search(r"#\[\s*(?:cfg\s*\(|test\s*\])", attributes):
        return "a function built only under a condition (#[cfg], #[test])"
    return None


def items(src: str) -> tuple[dict[str, Fn], dict[str, str]]:
    """The top-level functions by name and the top-level ``const``/``static`` items' texts by name."""
    text = masked(src)
    fns: dict[str, Fn] = {}
    values: dict[str, str] = {}
    read_to = value_to = 0  # an item's text holds no other item: each part of the text is read once
    for a, b in _top(text):
        for m in _HEAD.finditer(text, a, b):
            if m.start() < read_to:
                continue
            open_at = text.find("(", _close_angle(text, m.start(2))) if m.group(2) == "<" else m.end() - 1
            if open_at < 0:
                read_to = len(text)
                continue
            close = closing(text, open_at)
            found = _BODY_OR_END.search(text, close)
            read_to = found.start() if found is not None else len(text)
            if found is None or found.group() == ";":
                continue  # a declaration without a body
            params = [(p.split(":", 1)[0].strip(), p.split(":", 1)[1].strip()) if ":" in p else (p.strip(), "")
                      for p in split_commas(src[open_at + 1 : close])]  # fmt: skip
            fns[m.group(1)] = (m.start(), closing(text, found.start()) + 1, params, _uncallable(text, m))
        for m in _VALUE.finditer(text, a, b):
            if m.start() < value_to:
                continue
            value_to = _item_end(text, m.end())
            values[m.group(1)] = " ".join(words(src[m.start() : value_to]))
    return fns, values


def _item_end(text: str, i: int) -> int:
    """After the ``;`` that ends the item going on at ``i`` in masked ``text``: the first one outside brackets
    (``const X: [i32; 3] = [1, 2, 3];`` ends at its last ``;``); the end of the text when none does."""
    depth = 0
    for m in _BRACKET_OR_END.finditer(text, i):
        c = m.group()
        if c == ";" and depth == 0:
            return m.end()
        depth += 1 if c in "([{" else -1 if c in ")]}" else 0
    return len(text)


def _close_angle(text: str, i: int) -> int:
    depth = 0
    for j in range(i, len(text)):
        depth += {"<": 1, ">": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return len(text) - 1


def _line(src: str, at: int) -> int:
    return src.count("\n", 0, at) + 1


def compare_rust(old: str, new: str, *, file: str) -> tuple[list[Changed], list[Skipped]]:
    """The functions of ``new`` whose code changed from ``old`` (or that read a changed ``const``/``static``),
    and the changed ones that cannot be called (generic, or a parameter of another type)."""
    old_fns, old_values = items(old)
    new_fns, new_values = items(new)
    moved = {k for k in old_values.keys() | new_values.keys() if old_values.get(k) != new_values.get(k)}
    out: list[Changed] = []
    skipped: list[Skipped] = []
    for name, (start, end, params, blocked) in new_fns.items():
        if name == "main" or name not in old_fns:
            continue
        o_start, o_end, _, _ = old_fns[name]
        reads = sorted(set(_WORD.findall(masked(new[start:end]))) & moved)
        if words(old[o_start:o_end]) != words(new[start:end]):
            why = "its code changed"
        elif reads:
            why = f"it reads {', '.join(reads)}, whose top-level value changed"
        else:
            continue
        if blocked is None and (
            not all(simple(t) for _, t in params)
            or any(n in ("self", "&self", "&mut self") for n, _ in params)
        ):
            blocked = "a function of parameters of other types"
        if blocked is not None:
            skipped.append(Skipped(file=file, reason=f"{name}: {blocked}: not compared"))
            continue
        old_src, new_src = old[o_start:o_end], new[start:end]
        first, o_first = _line(new, start), _line(old, o_start)
        o_lines, n_lines = changed_lines(old_src, new_src, first)
        o_lines = [o_first + k - 1 for k in o_lines]
        literals = line_literals("rust", old, new, o_lines, n_lines)
        out.append(Changed(
            target="function", language="rust", file=file, old_file=file, name=name, params=params,
            old_source=old_src, new_source=new_src, line=first, end_line=_line(new, end - 1),
            changed_lines=n_lines, literals=literals, why=why,
        ))  # fmt: skip
    return out, skipped
