"""Which JavaScript functions a change altered: the top-level ``function f(...) {...}`` declarations and the
``const``/``let``/``var f = function ...`` or arrow-function definitions (``export`` and ``async`` allowed) of
the base and the changed file, compared by their tokens (:mod:`.jsscan`: comments and layout left out).

The methods of top-level classes (:mod:`.jsclasses`) are compared the same way, each named ``X.method``
(an instance method whose class has a static one of the same name: ``X.prototype.method``): an instance
method is called on ``new X()``, a static one on ``X``, the constructor as ``new X(...)``; a generator
function or method is compared by what it yields (:mod:`.node`);
a changed getter, setter, private (``#``) or computed method is listed as skipped with the reason.

As for Python, a function or method whose tokens are the same but that reads a top-level
``const``/``let``/``var`` whose definition changed counts too. Functions and methods on one side only are
not compared; methods of object literals are not found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memdoor.review.context import Skipped
from memdoor.review.differential.jsclasses import Member, classes, members
from memdoor.review.differential.jsscan import Token, matching, statement_end, tokens
from memdoor.review.differential.targets import Changed, JsKind, changed_lines

MAX_LITERALS = 12
MAX_LITERAL_CHARS = 80


@dataclass(frozen=True)
class Definition:
    name: str
    first: int  # token indexes, inclusive
    last: int
    params: list[tuple[str, str]]
    is_function: bool


def _params(toks: list[Token], open_at: int, close_at: int) -> list[tuple[str, str]]:
    """``(name, default text)`` of each parameter between the parentheses at ``open_at``/``close_at``."""
    out: list[tuple[str, str]] = []
    part: list[Token] = []
    depth = 0
    for t in [*toks[open_at + 1 : close_at], None]:
        if t is None or (depth == 0 and t.text == ","):
            if part:
                eq = next((k for k, p in enumerate(part) if p.text == "="), None)
                head = part[: eq if eq is not None else len(part)]
                name = "".join(p.text for p in head)
                default = " ".join(p.text for p in part[eq + 1 :]) if eq is not None else ""
                out.append((name, default))
            part = []
            continue
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        part.append(t)
    return out


def _function_at(toks: list[Token], i: int) -> tuple[int, list[tuple[str, str]]] | None:
    """A function expression starting at ``i`` (``async``, ``function``, an arrow): its last token and
    parameters, or None when none starts there."""
    if i < len(toks) and toks[i].text == "async":
        i += 1
    if i >= len(toks):
        return None
    t = toks[i]
    if t.text == "function":
        j = i + 1 + (i + 1 < len(toks) and toks[i + 1].text == "*")
        j += j < len(toks) and toks[j].kind == "name"  # its name: the ``(`` is next, looked for no further
        if j >= len(toks) or toks[j].text != "(":
            return None
        close = matching(toks, j)
        body = close + 1
        if body >= len(toks) or toks[body].text != "{":
            return None
        return matching(toks, body), _params(toks, j, close)
    if t.text == "(":
        close = matching(toks, i)
        params = _params(toks, i, close)
        arrow = close + 1
    elif t.kind == "name":
        params, arrow = [(t.text, "")], i + 1
    else:
        return None
    if arrow >= len(toks) or toks[arrow].text != "=>" or arrow + 1 >= len(toks):
        return None
    body = arrow + 1
    if toks[body].text == "{":
        return matching(toks, body), params
    return statement_end(toks, body), params


def definitions(src: str) -> tuple[list[Token], dict[str, Definition]]:
    """The tokens of ``src`` and its top-level definitions by name (functions, and other declarations)."""
    toks = tokens(src)
    out: dict[str, Definition] = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct" and t.text in "([{":
            i = matching(toks, i) + 1
            continue
        first = i
        j = i
        while j < len(toks) and toks[j].text in ("export", "default"):
            j += 1
        k = j + 1 if j < len(toks) and toks[j].text == "async" else j
        if k < len(toks) and toks[k].text == "function":
            name_at = k + 1 + (k + 1 < len(toks) and toks[k + 1].text == "*")
            found = _function_at(toks, j)
            if found is not None and name_at < len(toks) and toks[name_at].kind == "name":
                out[toks[name_at].text] = Definition(toks[name_at].text, first, found[0], found[1], True)
                i = found[0] + 1
                continue
        if j < len(toks) and toks[j].text in ("const", "let", "var"):
            name, eq = (toks[j + 1] if j + 1 < len(toks) else None), j + 2
            if name is not None and name.kind == "name" and eq < len(toks) and toks[eq].text == "=":
                found = _function_at(toks, eq + 1)
                last = found[0] if found is not None else statement_end(toks, eq + 1)
                if last + 1 < len(toks) and toks[last + 1].text == ";":
                    last += 1
                params = found[1] if found is not None else []
                out[name.text] = Definition(name.text, first, last, params, found is not None)
                i = last + 1
                continue
        i = max(i + 1, j)  # from any of the ``export``/``default`` words skipped, the same j: none is a start
    return toks, out


def _texts(toks: list[Token], first: int, last: int) -> list[str]:
    return [t.text for t in toks[first : last + 1]]


def _source(src: str, toks: list[Token], first_at: int, last_at: int) -> tuple[str, int, int]:
    """The whole lines of tokens ``first_at``..``last_at``, their first and last line number."""
    first, last = toks[first_at], toks[last_at]
    start = src.rfind("\n", 0, first.start) + 1
    end = src.find("\n", last.start + len(last.text))
    end = len(src) if end < 0 else end
    return src[start:end], first.line, last.line + last.text.count("\n")


def _literal(t: Token) -> Any:
    if t.kind == "number":
        try:
            return float(t.text) if any(c in t.text for c in ".eE") else int(t.text, 0)
        except ValueError:
            return None
    if (
        t.kind == "string"
        and len(t.text) >= 2
        and "\\" not in t.text
        and len(t.text) - 2 <= MAX_LITERAL_CHARS
    ):
        return t.text[1:-1]
    return None


def _literals(toks: list[Token], first: int, last: int, lines: set[int]) -> list[Any]:
    out: list[Any] = []
    for t in toks[first : last + 1]:
        if t.line in lines and (v := _literal(t)) is not None and v not in out:
            out.append(v)
    return out


@dataclass(frozen=True)
class _Side:
    """One version of a file: its text, tokens, top-level definitions and classes' members."""

    src: str
    toks: list[Token]
    defs: dict[str, Definition]
    members: dict[tuple[str, str, str, str], Member]


def _side(src: str) -> _Side:
    toks, defs = definitions(src)
    found = {m.key: m for c in classes(toks) for m in members(toks, c)}
    return _Side(src, toks, defs, found)


def _span(d: Definition | Member) -> tuple[int, int]:
    return d.first, d.last


def _differ(old: _Side, o: tuple[int, int], new: _Side, n: tuple[int, int]) -> bool:
    """Whether the tokens of span ``o`` in the base and span ``n`` in the change differ."""
    return _texts(old.toks, *o) != _texts(new.toks, *n)


def _why(
    old: _Side, o: tuple[int, int], new: _Side, n: tuple[int, int], moved: set[str], own: str
) -> str | None:
    """Why the code at token spans ``o`` (base) and ``n`` (change) is compared: its tokens changed, or it
    reads a changed top-level declaration other than ``own``; None when neither."""
    if _differ(old, o, new, n):
        return "its code changed"
    body = {t.text for t in new.toks[n[0] : n[1] + 1] if t.kind == "name"}
    reads = sorted((body & moved) - {own})
    return f"it reads {', '.join(reads)}, whose top-level value changed" if reads else None


def _changed(
    old: _Side, o: tuple[int, int], new: _Side, n: tuple[int, int], *, file: str, name: str,
    params: list[tuple[str, str]], kind: JsKind, why: str,
) -> Changed:  # fmt: skip
    old_src, old_first, _ = _source(old.src, old.toks, *o)
    new_src, new_first, new_last = _source(new.src, new.toks, *n)
    o_lines, n_lines = changed_lines(old_src, new_src, new_first)
    o_lines = [old_first + k - 1 for k in o_lines]
    literals = _literals(new.toks, *n, set(n_lines))
    literals += [v for v in _literals(old.toks, *o, set(o_lines)) if v not in literals]
    return Changed(
        target="function", language="javascript", file=file, old_file=file, name=name, kind=kind, params=params,
        old_source=old_src, new_source=new_src, line=new_first, end_line=max(new_last, new_first),
        changed_lines=n_lines, literals=literals[:MAX_LITERALS], why=why,
    )  # fmt: skip


def compare_javascript(old: str, new: str, *, file: str) -> tuple[list[Changed], list[Skipped]]:
    """The functions and class methods of ``new`` whose tokens changed from ``old`` (or that read a changed
    top-level declaration), and the changed members that cannot be called (getters, setters, private or
    computed names), skipped with the reason."""
    o, n = _side(old), _side(new)
    values = {k for k, d in [*o.defs.items(), *n.defs.items()] if not d.is_function}
    moved = {
        k for k in values
        if k not in o.defs or k not in n.defs or _differ(o, _span(o.defs[k]), n, _span(n.defs[k]))
    }  # fmt: skip
    # on both sides: (base, change, the name it may read though changed, its name, kind); functions first
    pairs: list[tuple[Definition | Member, Definition | Member, str, str, JsKind]] = [
        (o.defs[k], d, k, k, "function")
        for k, d in n.defs.items()
        if d.is_function and k in o.defs and o.defs[k].is_function
    ]
    pairs += [(o.members[k], m, m.cls, m.label, m.kind) for k, m in n.members.items() if k in o.members]
    out, skipped = [], []
    for was, now, own, name, kind in pairs:
        if (why := _why(o, _span(was), n, _span(now), moved, own)) is None:
            continue
        if isinstance(now, Member) and now.skip is not None:
            skipped.append(Skipped(file=file, reason=f"{name}: {now.skip}: not compared"))
            continue
        params = now.params if isinstance(now, Definition) else _params(n.toks, *now.params_at)
        out.append(
            _changed(o, _span(was), n, _span(now), file=file, name=name, params=params, kind=kind, why=why)
        )
    return out, skipped
