"""A JavaScript scanner careful enough to find a file's top-level functions: tokens that respect strings,
template literals (with their ``${...}`` expressions), comments and regular-expression literals.

A ``/`` starts a regular expression where an expression may start (after an operator, an opening bracket, a
keyword such as ``return``, or at the start), and only when the literal closes on the same line; otherwise
it is division. Brackets are matched by depth. Nothing here runs the code: a file it misreads yields a
wrong or missing function, never an error (an unterminated string or comment ends at the end of the text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PUNCT = sorted(
    [
        ">>>=",
        "...",
        "===",
        "!==",
        "**=",
        "<<=",
        ">>=",
        ">>>",
        "&&=",
        "||=",
        "??=",
        "=>",
        "==",
        "!=",
        "<=",
        ">=",
        "&&",
        "||",
        "??",
        "?.",
        "++",
        "--",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "&=",
        "|=",
        "^=",
        "**",
        "<<",
        ">>",
    ],
    key=len,
    reverse=True,
)
_REGEX_AFTER = frozenset(
    {
        "return",
        "typeof",
        "case",
        "do",
        "else",
        "in",
        "instanceof",
        "new",
        "delete",
        "void",
        "throw",
        "yield",
        "await",
        "of",
    }
)
_OPERATOR = re.compile("|".join(map(re.escape, _PUNCT)) + "|.", re.S)
_NAME = re.compile(r"[A-Za-z_$#\u0080-\uffff][\w$\u0080-\uffff]*")
_NUMBER = re.compile(r"\d[\w.]*(?:[eE][+-]\d+)?|\.\d[\w]*(?:[eE][+-]\d+)?")
OPEN, CLOSE = "([{", ")]}"
MAX_NESTING = 100
"""Templates and ``${`` expressions open at once, at most (a deeper template ends at the end of the text)."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # name, number, string, template, regex, punct
    text: str
    start: int
    line: int


def _skip_string(src: str, i: int) -> int:
    """The end of the quoted string starting at ``i`` (an unescaped newline or the text's end ends it too)."""
    quote, i = src[i], i + 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == quote or c == "\n":
            return i + 1
        i += 1
    return len(src)


def _skip_template(src: str, i: int) -> int:
    """The end of the template literal starting at ``i``, its ``${...}`` expressions (and the strings, comments
    and templates in them) included. One loop with a stack of what is open — a template's text (``-1``) or
    an expression (its brace depth) — so nesting costs no recursion; nested deeper than :data:`MAX_NESTING`,
    the template ends at the end of the text."""
    stack, n = [-1], len(src)
    i += 1
    while i < n:
        c = src[i]
        if stack[-1] < 0:  # a template's text
            if c == "\\":
                i += 2
            elif c == "`":
                stack.pop()
                i += 1
                if not stack:
                    return i
            elif src.startswith("${", i):
                stack.append(0)
                i += 2
            else:
                i += 1
        elif c in "'\"":
            i = _skip_string(src, i)
        elif c == "`":
            stack.append(-1)
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "{":
            stack[-1] += 1
            i += 1
        elif c == "}":
            if stack[-1] == 0:
                stack.pop()  # the expression ends: back in its template's text
            else:
                stack[-1] -= 1
            i += 1
        else:
            i += 1
        if len(stack) > MAX_NESTING:
            return n
    return n


def _regex_end(src: str, i: int) -> int | None:
    """The end of a regular-expression literal starting at ``i`` (its flags included), or None when no
    closing ``/`` is on the same line."""
    j, in_class = i + 1, False
    while j < len(src):
        c = src[j]
        if c == "\n":
            return None
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            j += 1
            while j < len(src) and (src[j].isalnum() or src[j] == "_"):
                j += 1
            return j
        j += 1
    return None


def _regex_at(src: str, i: int, out: list[Token], plain_until: int) -> int | None:
    """At a ``/`` where a regular expression may start: its end, or -1 when none closes on the line; None
    elsewhere."""
    if src[i] != "/" or i < plain_until or not _regex_allowed(out[-1] if out else None):
        return None
    end = _regex_end(src, i)
    return -1 if end is None else end


def _line_end(src: str, i: int) -> int:
    j = src.find("\n", i)
    return len(src) if j < 0 else j


def _regex_allowed(prev: Token | None) -> bool:
    if prev is None:
        return True
    if prev.kind == "punct":
        return prev.text not in (")", "]")
    return prev.kind == "name" and prev.text in _REGEX_AFTER


def tokens(src: str) -> list[Token]:
    """The tokens of ``src``, comments and layout left out."""
    out: list[Token] = []
    i, line, n = 0, 1, len(src)
    plain_until = 0  # a regular expression that did not close ends the line's: its later ``/`` divide
    if src.startswith("#!"):
        i = src.find("\n") if "\n" in src else n
    while i < n:
        c = src[i]
        if c.isspace():
            line += c == "\n"
            i += 1
            continue
        start, kind = i, "punct"
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            end = n if j < 0 else j + 2
            line += src.count("\n", i, end)
            i = end
            continue
        regex = _regex_at(src, i, out, plain_until)
        if regex == -1:  # none closes: division, and so is every later ``/`` of the line (no rescan)
            plain_until = _line_end(src, i)
        if c in "'\"":
            i, kind = _skip_string(src, i), "string"
        elif c == "`":
            i, kind = _skip_template(src, i), "template"
        elif regex is not None and regex >= 0:
            i, kind = regex, "regex"
        elif (m := _NUMBER.match(src, i)) is not None:
            i, kind = m.end(), "number"
        elif (m := _NAME.match(src, i)) is not None:
            i, kind = m.end(), "name"
        else:
            i = _OPERATOR.match(src, i).end()  # type: ignore[union-attr]  # "." matches any character
        out.append(Token(kind, src[start:i], start, line))
        line += src.count("\n", start, i)
    return out


def matching(toks: list[Token], i: int) -> int:
    """The index of the bracket closing the one at ``i`` (the last token when it never closes)."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "punct" and t.text in OPEN:
            depth += 1
        elif t.kind == "punct" and t.text in CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def partners(toks: list[Token]) -> list[int]:
    """For each bracket that opens, the index :func:`matching` gives (its closing one, or the last token), all
    found in one pass with a stack; any other token's entry is its own index. Reading many spans of one file
    (every call of a function in a test file) with it costs linear time where :func:`matching` per span is
    quadratic."""
    out = list(range(len(toks)))
    open_at: list[int] = []
    for j, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in OPEN:
            open_at.append(j)
        elif t.text in CLOSE and open_at:
            out[open_at.pop()] = j
    for j in open_at:
        out[j] = len(toks) - 1
    return out


_STATEMENT_WORDS = frozenset(
    {
        "const",
        "let",
        "var",
        "function",
        "class",
        "export",
        "import",
        "if",
        "for",
        "while",
        "do",
        "return",
        "switch",
        "try",
        "throw",
        "async",
        "module",
        "exports",
    }
)
_CONTINUE = frozenset({".", "?.", "?", ":", "(", "[", "=>", ",", ")", "]", "}"})


def statement_end(toks: list[Token], i: int) -> int:
    """The index of the last token of the expression statement starting at ``i``: a ``;`` at its depth, or
    a line break where JavaScript would end the statement (a new statement's keyword, or a value followed
    by a value)."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if j > i and depth == 0 and t.line > toks[j - 1].line:
            prev = toks[j - 1]
            ends_value = prev.kind != "punct" or prev.text in (")", "]", "}", "++", "--")
            starts = t.kind == "name" and (t.text in _STATEMENT_WORDS or ends_value)
            if (starts or (ends_value and t.kind not in ("punct",))) and t.text not in _CONTINUE:
                return j - 1
        if t.kind == "punct" and t.text in OPEN:
            depth += 1
        elif t.kind == "punct" and t.text in CLOSE:
            if depth == 0:
                return j - 1
            depth -= 1
        elif t.kind == "punct" and t.text in (";", ",") and depth == 0:
            return j if t.text == ";" else j - 1
    return len(toks) - 1
