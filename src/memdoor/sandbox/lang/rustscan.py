"""Rust text read for its comments and literals as rustc (edition 2021) reads them, in one linear pass (a
hostile file costs its length, never its square): where the comments (``//``, nested ``/* */``, a shebang
line), strings (``"..."``, raw ``r#"..."#``, with a ``b`` or ``c`` prefix) and character literals are, so
that braces, ``//`` or ``fn main`` inside them never count.

A literal's suffix (a word right after it, which a macro's tokens may hold: ``"a"r``) is part of it, and a
prefix (``r``, ``br``, ``cr``) starts a raw string only where a word starts, as in rustc: ``"a"r#"x"`` is
the string ``"a"`` with the suffix ``r``, a ``#``, then the string ``"x"``, never a raw string running to the
next ``"#`` (read so, code after it was hidden from :mod:`.rust_untrusted`); nor is the ``r"`` ending a
lifetime (``'r"x"``), a raw identifier (``r#r"x"``) or a longer word. A word's characters are an
identifier's: ASCII letters, digits and ``_``, and every other character but rustc's whitespace and a byte
order mark (in code rustc compiles, any other is part of an identifier).

An unterminated comment or string ends at the end of the text; a ``'`` that starts no character literal is a
lifetime's (its name skipped with it). Nothing here runs the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RUST_MAIN = re.compile(r"^(?:pub\s+)?fn\s+main\s*\(", re.M)
"""A top-level ``fn main(`` (read in :func:`masked` text, so that one in a string or comment is not)."""
_NAME = r"A-Za-z_\x80-\x84\x86-\u200d\u2010-\u2027\u202a-\ufefe\uff00-\U0010ffff"
"""What may start a word (a character class's contents): not a digit, not ASCII punctuation or whitespace,
not rustc's other whitespace (U+0085, U+200E, U+200F, U+2028, U+2029) nor a byte order mark."""
_WORD = re.compile(rf"[0-9{_NAME}]*")
_SUFFIX = re.compile(rf"[{_NAME}][0-9{_NAME}]*")
"""A literal's suffix (rustc's: an identifier)."""
_START = re.compile(rf"//|/\*|(?<![0-9{_NAME}])[0-9{_NAME}]+(?=[\"'#])|\"|'")
"""What may start a comment or a literal: a whole word only before a quote or a ``#`` (a prefix, a raw
identifier's ``r``, or a word to skip)."""
_RAW = re.compile(r'(#*)"')
"""The rest of a raw string's opening after its prefix."""
_WHITESPACE = "\t\n\x0b\x0c\r \x85\u200e\u200f\u2028\u2029"
"""rustc's whitespace."""
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
    """A comment or a literal: ``[start, end)`` of the text (a literal's suffix in it), and of its contents
    (a literal's, without its quotes and suffix; a comment's is all of it)."""

    kind: str  # comment (a shebang line too), string, char
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


def _suffixed(src: str, end: int) -> int:
    """The end of the literal ending at ``end`` with its suffix, if it has one."""
    m = _SUFFIX.match(src, end)
    return end if m is None else m.end()


def _lifetime_end(src: str, i: int) -> int:
    """Where scanning goes on after the ``'`` at ``i`` that starts no character literal: after the lifetime
    it starts (``'a``, a raw ``'r#a``), else after the quote (rustc refuses the text)."""
    end = _WORD.match(src, i + 1).end()  # type: ignore[union-attr]  # matches the empty text too
    if src[i + 1 : end] == "r" and src.startswith("#", end) and _SUFFIX.match(src, end + 1) is not None:
        end = _WORD.match(src, end + 1).end()  # type: ignore[union-attr]
    return end


def _plain_comment(src: str, i: int) -> bool:
    """Whether a comment but not a doc comment starts at ``i``."""
    if src.startswith("//", i):
        return src.startswith("////", i) or not src.startswith(("//!", "///"), i)
    if src.startswith("/*", i):
        doc = src.startswith("/*!", i) or (src.startswith("/**", i) and src[i + 3 : i + 4] not in ("*", "/"))
        return not doc
    return False


def shebang_end(src: str) -> int:
    """The end of the text's shebang line (0: none), as rustc strips it: a first line beginning ``#!`` (after
    a byte order mark) unless only whitespace and plain comments stand between the ``#!`` and a ``[`` (an
    inner attribute's)."""
    at = 1 if src.startswith("\ufeff") else 0
    if not src.startswith("#!", at):
        return 0
    i, n = at + 2, len(src)
    while i < n:
        if src[i] in _WHITESPACE:
            i += 1
        elif not _plain_comment(src, i):
            break
        elif src.startswith("//", i):
            i = n if (j := src.find("\n", i)) < 0 else j
        else:
            i = _block_end(src, i)
    if src.startswith("[", i):
        return 0
    end = n if (j := src.find("\n", at)) < 0 else j
    return end - 1 if src.startswith("\r\n", end - 1) else end


def spans(src: str) -> list[Span]:
    """The comments and literals of ``src``, in order (a literal's suffix in its span, after its contents)."""
    out: list[Span] = []
    i, n = shebang_end(src), len(src)
    if i:
        out.append(Span("comment", 0, i, 0, i))
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
                i = _lifetime_end(src, i)
                continue
            end = _suffixed(src, char_end)
            out.append(Span("char", i, end, i + 1, char_end - 1))
        elif token == '"':
            close = _string_close(src, i)
            end = n if close == n else _suffixed(src, close + 1)
            out.append(Span("string", i, end, i + 1, close))
        elif token in ("r", "br", "cr") and (raw := _RAW.match(src, m.end())) is not None:
            close = '"' + raw.group(1)
            j = src.find(close, raw.end())
            end = n if j < 0 else _suffixed(src, j + len(close))
            out.append(Span("string", i, end, raw.end(), n if j < 0 else j))
        elif token == "r" and src.startswith("#", m.end()) and _SUFFIX.match(src, m.end() + 1) is not None:
            end = _WORD.match(src, m.end() + 1).end()  # type: ignore[union-attr]  # a raw identifier
        else:  # a word before a quote or a '#' (a b or c prefix of a string the next search finds)
            end = m.end()
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
