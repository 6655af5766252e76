"""Which Rust functions a change altered, and values of their parameter types.

The file is read with its comments, strings and character literals blanked (:func:`masked`), so braces
in them never count; a top-level ``fn`` (``pub``, ``const``, ``unsafe``, ``async`` allowed; not generic,
not inside an ``impl``, ``mod`` or ``trait``) is compared by its text without comments and layout. As for
Python, a function whose text is the same but that reads a top-level ``const``/``static`` whose definition
changed counts too. Only functions whose parameters all have simple types are compared: integers, ``f32``,
``f64``, ``bool``, ``char``, ``String``/``&str``, and ``Vec``/slices/``Option``/tuples of those (references
allowed); the others are skipped with the reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memdoor.review.context import Skipped
from memdoor.review.differential.inputs import Read
from memdoor.review.differential.programs import line_literals
from memdoor.review.differential.rustscan import masked, words
from memdoor.review.differential.targets import Changed, changed_lines
from memdoor.sandbox.lang import rust_call
from memdoor.sandbox.lang.rust_call import _split

INTS = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"}
_VISIBLE = r"^[ \t]*(?:pub(?:\([^)\n]{0,64}\))?\s+)?"  # at a line's start; bounded: no quadratic search
_HEAD = re.compile(
    _VISIBLE + r"(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\S+\s+)?fn\s+(\w+)\s*([<(])", re.M
)
_VALUE = re.compile(_VISIBLE + r"(?:const|static)\s+(?:mut\s+)?(\w+)\s*:", re.M)
_BODY_OR_END = re.compile(r"[{;]")
_BRACKET_OR_END = re.compile(r"[()\[\]{};]")
_WORD = re.compile(r"\b\w+\b")
MAX_TYPE_DEPTH = 6
"""Types nested deeper (``Vec<Vec<...>>``) are not simple: their functions are not compared."""


def _close(text: str, i: int) -> int:
    """The index of the bracket closing the one at ``i`` in masked ``text`` (the end when it never does)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    depth, opening = 0, text[i]
    for j in range(i, len(text)):
        if text[j] == opening:
            depth += 1
        elif text[j] == pairs[opening]:
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


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


def items(src: str) -> tuple[dict[str, tuple[int, int, list[tuple[str, str]], bool]], dict[str, str]]:
    """The top-level functions by name — ``(start, end, params, generic)`` — and the top-level
    ``const``/``static`` items' texts by name."""
    text = masked(src)
    fns: dict[str, tuple[int, int, list[tuple[str, str]], bool]] = {}
    values: dict[str, str] = {}
    read_to = value_to = 0  # an item's text holds no other item: each part of the text is read once
    for a, b in _top(text):
        for m in _HEAD.finditer(text, a, b):
            if m.start() < read_to:
                continue
            generic = m.group(2) == "<"
            open_at = text.find("(", _close_angle(text, m.start(2))) if generic else m.end() - 1
            if open_at < 0:
                read_to = len(text)
                continue
            close = _close(text, open_at)
            found = _BODY_OR_END.search(text, close)
            read_to = found.start() if found is not None else len(text)
            if found is None or found.group() == ";":
                continue  # a declaration without a body
            params = [(p.split(":", 1)[0].strip(), p.split(":", 1)[1].strip()) if ":" in p else (p.strip(), "")
                      for p in _split(src[open_at + 1 : close])]  # fmt: skip
            fns[m.group(1)] = (m.start(), _close(text, found.start()) + 1, params, generic)
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


def simple(t: str, depth: int = 0) -> bool:
    """Whether a parameter type is one whose values the stage can write as Rust literals (nested
    :data:`MAX_TYPE_DEPTH` deep at most)."""
    t = re.sub(r"^&\s*(?:'\w+\s+)?(?:mut\s+)?", "", t.strip())
    if t in INTS or t in ("f32", "f64", "bool", "char", "String", "str"):
        return True
    if depth >= MAX_TYPE_DEPTH:
        return False
    if t.startswith("[") and t.endswith("]") and ";" not in t:
        return simple(t[1:-1], depth + 1)
    m = re.fullmatch(r"(?:Vec|Option)\s*<(.+)>", t)
    if m:
        return simple(m.group(1), depth + 1)
    if t.startswith("(") and t.endswith(")"):
        parts = _split(t[1:-1])
        return bool(parts) and all(simple(p, depth + 1) for p in parts)
    return False


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
    for name, (start, end, params, generic) in new_fns.items():
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
        if (
            generic
            or not all(simple(t) for _, t in params)
            or any(n in ("self", "&self", "&mut self") for n, _ in params)
        ):
            skipped.append(
                Skipped(
                    file=file,
                    reason=f"{name}: a generic function or one of parameters of other types: not compared",
                )
            )
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


_POOLS: dict[str, list[Any]] = {
    "int": [0, 1, -1, 2, 10, 100],
    "float": [0.0, 1.0, -1.5, 0.5, 1e9],
    "bool": [True, False],
    "char": ["a", "Z", "0", " "],
    "str": ["", "a", "abc", "Hello World", " "],
}


def values_of(t: str, literals: list[Any], depth: int = 0) -> list[Any]:
    """JSON values of the Rust type ``t``: the literals that fit it (and their neighbours), then generic ones."""
    t = re.sub(r"^&\s*(?:'\w+\s+)?(?:mut\s+)?", "", t.strip())
    if depth > 3:
        return []
    if t in INTS:
        near = [
            v for k in literals if isinstance(k, int) and not isinstance(k, bool) for v in (k, k - 1, k + 1)
        ]
        return [v for v in near + _POOLS["int"] if v >= 0 or t.startswith("i")]
    if t in ("f32", "f64"):
        return [
            float(k) for k in literals if isinstance(k, int | float) and not isinstance(k, bool)
        ] + _POOLS["float"]
    if t in ("bool", "char"):
        return list(_POOLS[t])
    if t in ("String", "str"):
        return [k for k in literals if isinstance(k, str)] + _POOLS["str"]
    m = re.fullmatch(r"Vec\s*<(.+)>", t) or re.fullmatch(r"\[(.+)\]", t)
    if m:
        inner = values_of(m.group(1), literals, depth + 1)[:4]
        return [[], inner[:1], inner[:3], [*inner[1:3], *inner[:1]], inner[:1] * 2]
    m = re.fullmatch(r"Option\s*<(.+)>", t)
    if m:
        return [None, *values_of(m.group(1), literals, depth + 1)]
    if t.startswith("(") and t.endswith(")"):
        parts = [values_of(p, literals, depth + 1) for p in _split(t[1:-1])]
        if all(parts):
            return [[p[0] for p in parts], [p[min(1, len(p) - 1)] for p in parts]]
    return []


def rust_pool(fn: Changed, param: tuple[str, str]) -> list[Any]:
    return values_of(param[1], fn.literals)


def refused(fn: Changed, read: Read) -> Read:
    """``read`` without the inputs that cannot be written as literals of ``fn``'s parameter types (each
    refused with its reason)."""
    kept = []
    for call in read.calls:
        args = json.loads(call.text)
        try:
            if len(args) != len(fn.params):
                raise rust_call.Unsupported(
                    f"{fn.name} takes {len(fn.params)} arguments, the input gives {len(args)}"
                )
            for a, (_, t) in zip(args, fn.params, strict=True):
                rust_call.literal(a, t)
        except rust_call.Unsupported as e:
            read.rejected.append(str(e)[:200])
            continue
        kept.append(call)
    read.calls = kept
    return read
