"""The top-level JavaScript classes of a file and their members, read from its tokens (:mod:`.jsscan`).

A class is a top-level declaration ``class X {...}`` (``export`` or ``export default`` before it allowed)
or a ``const``/``let``/``var X = class {...}``. Its members are read in one pass over the body at its own
depth: methods (``static``, ``async``, ``*`` before them allowed), the constructor, getters and setters,
private (``#name``), computed (``[...]``) or quoted names, and fields and ``static {}`` blocks, which are
stepped over. Every bracket is jumped with :func:`.jsscan.matching` and every walk resumes where the last
one stopped, so a hostile file costs time linear in its tokens: no recursion, nothing quadratic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from memdoor.review.differential.jsscan import OPEN, Token, matching, statement_end

MemberKind = Literal["method", "staticmethod", "constructor"]
MAX_KEY_CHARS = 40
_MODIFIERS = frozenset({"static", "async", "get", "set", "accessor", "*"})
_KEY_KINDS = ("name", "string", "number")
_DECLARES = frozenset({"const", "let", "var"})
_EXPECTS_VALUE = frozenset(
    {"return", "typeof", "new", "await", "yield", "void", "delete", "throw", "in", "of"}
)


@dataclass(frozen=True)
class ClassSpan:
    """A top-level class: its name, the index of its statement's first token, its body's braces."""

    name: str
    first: int
    open: int
    close: int


@dataclass(frozen=True)
class Member:
    """A method (or accessor) of a top-level class, its tokens ``first``..``last`` (its modifiers to its
    body's ``}``), ``params_at`` its parameters' parentheses, ``skip`` why it cannot be called (None: it
    can); ``on_prototype``: an instance member whose class has a static one of the same name."""

    cls: str
    name: str
    kind: MemberKind
    accessor: str  # "", "get" or "set"
    first: int
    last: int
    params_at: tuple[int, int]
    skip: str | None
    on_prototype: bool = False

    @property
    def label(self) -> str:
        """``X.method`` (an accessor's with its word: ``X.get size``); ``X.prototype.method`` for an instance
        member whose class has a static one named the same, which keeps ``X.method``."""
        owner = f"{self.cls}.prototype" if self.on_prototype else self.cls
        return f"{owner}.{self.accessor + ' ' if self.accessor else ''}{self.name}"

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What matches a member of the base to one of the change."""
        return self.cls, self.kind, self.accessor, self.name


def _starts_statement(toks: list[Token], at: int) -> bool:
    """Whether a statement may start at token ``at`` (after a ``;`` or ``}``, or a value on an earlier
    line)."""
    if at == 0:
        return True
    prev = toks[at - 1]
    if prev.text in (";", "}"):
        return True
    if prev.line >= toks[at].line:
        return False
    if prev.kind == "punct":
        return prev.text in (")", "]", "++", "--")
    return prev.text not in _EXPECTS_VALUE


def _declared(toks: list[Token], at: int) -> tuple[str, int] | None:
    """The name a ``class`` keyword at ``at`` binds at the top level, and its statement's first token."""
    nxt = toks[at + 1] if at + 1 < len(toks) else None
    before = at
    while before > 0 and at - before < 2 and toks[before - 1].text in ("export", "default"):
        before -= 1
    named = nxt is not None and nxt.kind == "name" and nxt.text != "extends"
    if named and (before < at or _starts_statement(toks, at)):
        return nxt.text, before  # type: ignore[union-attr]
    k = at - 3  # const X = class
    if at >= 3 and toks[at - 1].text == "=" and toks[at - 2].kind == "name" and toks[k].text in _DECLARES:
        first = k - 1 if k > 0 and toks[k - 1].text == "export" else k
        if first < k or _starts_statement(toks, k):
            return toks[at - 2].text, first
    return None


def _body(toks: list[Token], at: int) -> tuple[int | None, int]:
    """The index of the ``{`` opening the body of the class whose keyword is at ``at`` (None when there is
    none), and where the walk stopped."""
    k = at + 1
    while k < len(toks):
        t = toks[k]
        if t.text == "{":
            return k, k
        if t.text in (";", "}", ")", "]"):
            return None, k
        k = matching(toks, k) + 1 if t.text in ("(", "[") else k + 1
    return None, k


def classes(toks: list[Token]) -> list[ClassSpan]:
    """The file's top-level classes, in order."""
    out: list[ClassSpan] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct" and t.text in OPEN:
            i = matching(toks, i) + 1
            continue
        if t.kind != "name" or t.text != "class" or (i and toks[i - 1].text in (".", "?.")):
            i += 1
            continue
        open_at, stopped = _body(toks, i)
        if open_at is None:
            i = max(stopped, i + 1)
            continue
        close = matching(toks, open_at)
        declared = _declared(toks, i)
        if declared is not None:
            out.append(ClassSpan(declared[0], declared[1], open_at, close))
        i = close + 1
    return out


def _modifies(toks: list[Token], k: int, end: int) -> bool:
    """Whether the word at ``k`` is a modifier of the member after it (not the member's own name)."""
    if toks[k].text not in _MODIFIERS or k + 1 >= end:
        return False
    if toks[k].text == "*":
        return True
    nxt = toks[k + 1]
    return nxt.kind in _KEY_KINDS or nxt.text in ("[", "*") or (toks[k].text == "static" and nxt.text == "{")


def _skip(key: Token, accessor: str) -> str | None:
    if accessor:
        return "a getter" if accessor == "get" else "a setter"
    if key.kind != "name":
        return "a computed or quoted name"
    if key.text.startswith("#"):
        return "a private method"
    return None


def members(toks: list[Token], cls: ClassSpan) -> list[Member]:
    """The methods and accessors of ``cls``, in order (fields and ``static`` blocks stepped over)."""
    out: list[Member] = []
    i, end = cls.open + 1, cls.close
    while i < end:
        start = i
        mods: set[str] = set()
        while i < end and _modifies(toks, i, end):
            mods.add(toks[i].text)
            i += 1
        if i >= end:
            break
        key = toks[i]
        if key.text == ";":
            i += 1
            continue
        if key.text == "{":  # a static block
            i = matching(toks, i) + 1
            continue
        key_end = matching(toks, i) if key.text == "[" else i
        if key.text != "[" and key.kind not in _KEY_KINDS:
            i += 1
            continue
        after = key_end + 1
        if after < end and toks[after].text == "(":
            close = matching(toks, after)
            if close + 1 < end and toks[close + 1].text == "{":
                last = matching(toks, close + 1)
                accessor = "get" if "get" in mods else ("set" if "set" in mods else "")
                name = key.text if key.text != "[" else "".join(t.text for t in toks[i : key_end + 1])
                static = "static" in mods
                kind: MemberKind = (
                    "staticmethod" if static else ("constructor" if name == "constructor" else "method")
                )
                skip = _skip(key, accessor) if key.text != "[" else "a computed or quoted name"
                out.append(
                    Member(cls.name, name[:MAX_KEY_CHARS], kind, accessor, start, last, (after, close), skip)
                )
                i = last + 1
                continue
            i = max(close + 1, i + 1)
            continue
        i = max(statement_end(toks, key_end) + 1, key_end + 1)  # a field: to its end
    statics = {(m.accessor, m.name) for m in out if m.kind == "staticmethod"}
    return [
        replace(m, on_prototype=True) if m.kind != "staticmethod" and (m.accessor, m.name) in statics else m
        for m in out
    ]
