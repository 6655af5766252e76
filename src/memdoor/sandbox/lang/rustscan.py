"""Rust text read for its comments and literals, in one linear pass (a hostile file costs its length, never
its square): where the comments (``//``, nested ``/* */``), strings (``"..."``, raw ``r#"..."#``, with a ``b``
or ``c`` prefix) and character literals are, so that braces, ``//`` or ``fn main`` inside them never count.

An unterminated comment or string ends at the end of the text; a ``'`` that starts no character literal is a
lifetime's. Nothing here runs the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RUST_MAIN = re.compile(r"^(?:pub\s+)?fn\s+main\s*\(", re.M)
"""A top-level ``fn main(`` (read in :func:`masked` text, so that one in a string or comment is not)."""
_START = re.compile(r"//|/\*|(?<!\w)[bc]?r(#*)\"|\"|'")
_BLOCK = re.compile(r"/\*|\*/")
_STRING_STOP = re.compile(r"[\"\\]")
_NOT_NEWLINE = re.compile(r"[^\n]")
_BRACKET = re.compile(r"[()\[\]{}]")
_OPENING = {")": "(", "]": "[", "}": "{"}
MAX_CHAR_LITERAL = 12
"""Characters of the longest character literal (``'\\u{10FFFF}'``) but a Unicode escape padded with ``_``."""
_UNICODE_CHAR = re.compile(r"\\u\{[0-9A-Fa-f_]*\}'")
"""The rest of a character literal ``'\\u{...}'`` (its digits may be padded with ``_``: ``'\\u{1_0_F_F_F_F}'``)."""


@dataclass(frozen=True)
class Span:
    """A comment or a literal: ``[start, end)`` of the text, and of its contents (a literal's, without its
    quotes; a comment's is all of it)."""

    kind: str  # comment, string, char
    start: int
    end: int
    inner_start: int
    inner_end: int


def _block_end(src: str, i: int) -> int:
    depth, j = 1, i + 2
    while depth:
        m = _BLOCK.search(src, j)
        if m is None:
            return len(src)
        depth += 1 if m.group() == "/*" else -1
        j = m.end()
    return j


def _string_close(src: str, i: int) -> int:
    """The index of the closing quote of the string whose opening ``"`` is at ``i`` (the text's length when it
    never closes)."""
    j = i + 1
    while (m := _STRING_STOP.search(src, j)) is not None:
        if m.group() == '"':
            return m.start()
        j = m.end() + 1
    return len(src)


def _char_end(src: str, i: int) -> int | None:
    """The end of the character literal at ``i``, or None when the ``'`` starts a lifetime."""
    if src.startswith("\\", i + 1):
        if (m := _UNICODE_CHAR.match(src, i + 1)) is not None:
            return m.end()
        j = src.find("'", i + 3, i + MAX_CHAR_LITERAL)
        return None if j < 0 else j + 1
    return i + 3 if src.startswith("'", i + 2) and i + 1 < len(src) and src[i + 1] != "\n" else None


def closing(text: str, i: int) -> int:
    """The index of the bracket closing the one at ``i`` in :func:`masked` ``text`` (the last index when it
    never does)."""
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


def partners(text: str) -> dict[int, int]:
    """Every opening bracket of :func:`masked` ``text`` (its index) with the index :func:`closing` gives it,
    all found in one pass (a stack per kind of bracket): what a scan of many items reads, never ``closing``
    once per item (a file of unclosed ``{`` would cost its length for each)."""
    out: dict[int, int] = {}
    open_: dict[str, list[int]] = {"(": [], "[": [], "{": []}
    for m in _BRACKET.finditer(text):
        c = m.group()
        if c in open_:
            open_[c].append(m.start())
        elif open_[_OPENING[c]]:
            out[open_[_OPENING[c]].pop()] = m.start()
    for never in open_.values():
        out.update(dict.fromkeys(never, len(text) - 1))
    return out


def spans(src: str) -> list[Span]:
    """The comments and literals of ``src``, in order."""
    out: list[Span] = []
    i, n = 0, len(src)
    while (m := _START.search(src, i)) is not None:
        i, token = m.start(), m.group()
        if token == "//":
            j = src.find("\n", i)
            end = n if j < 0 else j
            out.append(Span("comment", i, end, i, end))
        elif token == "/*":
            end = _block_end(src, i)
            out.append(Span("comment", i, end, i, end))
        elif token == "'":
            char_end = _char_end(src, i)
            if char_end is None:
                i += 1
                continue
            end = char_end
            out.append(Span("char", i, end, i + 1, end - 1))
        elif token == '"':
            close = _string_close(src, i)
            end = min(close + 1, n)
            out.append(Span("string", i, end, i + 1, close))
        else:  # a raw string
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            end = n if j < 0 else j + len(close)
            out.append(Span("string", i, end, m.end(), n if j < 0 else j))
        i = end
    return out


def blank(text: str) -> str:
    """``text`` as spaces, its line breaks kept."""
    return _NOT_NEWLINE.sub(" ", text)


def masked(src: str, literals: bool = True) -> str:
    """``src`` with its comments blanked, and the contents of its literals too when ``literals`` (lengths
    and lines kept): where brackets and keywords can be matched."""
    out, at = [], 0
    for s in spans(src):
        out.append(src[at : s.start])
        if s.kind == "comment":
            out.append(blank(src[s.start : s.end]))
        elif literals:
            inner = blank(src[s.inner_start : s.inner_end])
            out.append(src[s.start : s.inner_start] + inner + src[s.inner_end : s.end])
        else:
            out.append(src[s.start : s.end])
        at = s.end
    out.append(src[at:])
    return "".join(out)


def words(src: str) -> list[str]:
    """The code of ``src`` without comments and layout: its words, each literal one word (its text), so two
    texts with the same words differ only in comments and layout."""
    out: list[str] = []
    at = 0
    for s in spans(src):
        out += src[at : s.start].split()
        if s.kind != "comment":
            out.append(src[s.start : s.end])
        at = s.end
    out += src[at:].split()
    return out
