"""Call inputs as JSON argument lists, for the JavaScript and Rust functions: our own (each parameter's
default, the changed lines' literals, generic values), the calls the base's JavaScript tests make (their
arguments read as JavaScript literals, nothing evaluated), and the agents' (a JSON list of argument lists).

An input is kept as the JSON text of its argument list (``[[1, 2], 0]``); only JSON values ever reach the
sandbox program, which parses them with ``JSON.parse`` (or bakes them into Rust literals of the declared
types). Count, size and nesting are capped; what an agent wrote that is not a list of JSON argument lists is
refused with its reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from memdoor.review.differential.answers import read_list
from memdoor.review.differential.inputs import Call, Read
from memdoor.review.differential.jsscan import Token, partners, tokens
from memdoor.review.differential.targets import Changed

MAX_CALL_CHARS = 1000
MAX_OWN_INPUTS = 24
MAX_MINED = 12
MAX_ARGUMENTS = 16
MAX_DEPTH = 20
ANY: list[Any] = [0, 1, -1, 2, 10, 0.5, "", "abc", [], [1, 2, 3], [3, -1, 2, 0], {}, None, True]


class NotLiteral(ValueError):
    """A JavaScript expression that is not a plain literal (a name, a call, an operator)."""


def _depth(v: Any, d: int = 0) -> int:
    if isinstance(v, list):
        return max((_depth(x, d + 1) for x in v), default=d + 1)
    if isinstance(v, dict):
        return max((_depth(x, d + 1) for x in v.values()), default=d + 1)
    return d


def json_call(args: list[Any], source: Any = "own", agent: str | None = None) -> Call | None:
    """The input for ``args`` when it is plain JSON text within the caps (no NaN or Infinity, no lone
    surrogate such as ``"\\ud800"``: a text that cannot be written as UTF-8 breaks the report), else None."""
    if len(args) > MAX_ARGUMENTS or _depth(args) > MAX_DEPTH:
        return None
    try:
        text = json.dumps(args, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None
    return None if len(text) > MAX_CALL_CHARS else Call(text=text, source=source, agent=agent)


def _string(t: Token) -> str:
    if t.kind == "template":
        if "${" in t.text:
            raise NotLiteral(t.text[:40])
        return t.text[1:-1]
    body = t.text[1:-1]
    if t.text[0] == "'":
        body = body.replace('\\"', '"').replace('"', '\\"').replace("\\'", "'")
    try:
        value = json.loads(f'"{body}"')
    except ValueError as e:
        raise NotLiteral(t.text[:40]) from e
    return str(value)


def literal_at(toks: list[Token], i: int, depth: int = 0, pairs: list[int] | None = None) -> tuple[Any, int]:
    """The JavaScript literal starting at token ``i`` as a JSON value, and the index after it (``pairs``:
    the tokens' :func:`.jsscan.partners`, found here when not given)."""
    pairs = partners(toks) if pairs is None else pairs
    if depth > MAX_DEPTH or i >= len(toks):
        raise NotLiteral("too deep")
    t = toks[i]
    if t.text == "-" and i + 1 < len(toks) and toks[i + 1].kind == "number":
        value, end = literal_at(toks, i + 1, depth, pairs)
        return -value, end
    if t.kind == "number":
        try:
            value = (
                float(t.text)
                if re.search(r"[.eE]", t.text) and not t.text.startswith("0x")
                else int(t.text, 0)
            )
        except ValueError as e:
            raise NotLiteral(t.text) from e
        if isinstance(value, float) and not math.isfinite(value):
            raise NotLiteral(t.text)
        return value, i + 1
    if t.kind in ("string", "template"):
        return _string(t), i + 1
    if t.kind == "name" and t.text in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[t.text], i + 1
    if t.text in ("[", "{"):
        close = pairs[i]
        items = _split(toks, i + 1, close, pairs)
        if t.text == "[":
            return [
                literal_at(toks, a, depth + 1, pairs)[0] for a, b in items if _whole(toks, a, b, depth, pairs)
            ], close + 1
        out: dict[str, Any] = {}
        for a, b in items:
            key = toks[a]
            if a + 1 >= b or toks[a + 1].text != ":" or key.kind not in ("name", "string", "number"):
                raise NotLiteral("an object member that is not key: value")
            name = _string(key) if key.kind == "string" else key.text
            value, end = literal_at(toks, a + 2, depth + 1, pairs)
            if end != b:
                raise NotLiteral("an object member that is not key: value")
            out[name] = value
        return out, close + 1
    raise NotLiteral(t.text[:40])


def _whole(toks: list[Token], a: int, b: int, depth: int, pairs: list[int]) -> bool:
    if literal_at(toks, a, depth + 1, pairs)[1] != b:
        raise NotLiteral("an element that is not one literal")
    return True


def _split(toks: list[Token], start: int, end: int, pairs: list[int]) -> list[tuple[int, int]]:
    """The ``[a, b)`` token spans between ``start`` and ``end`` separated by commas at their depth."""
    spans, a, k = [], start, start
    while k < end:
        if toks[k].kind == "punct" and toks[k].text in ("(", "[", "{"):
            k = pairs[k] + 1
            continue
        if toks[k].text == ",":
            spans.append((a, k))
            a = k + 1
        k += 1
    if a < end:
        spans.append((a, end))
    return spans


def arguments_of(toks: list[Token], open_at: int, pairs: list[int] | None = None) -> list[Any]:
    """The literal arguments of the call whose ``(`` is at ``open_at`` (NotLiteral when one is not;
    ``pairs``: the tokens' :func:`.jsscan.partners`, found once per file by the caller of many calls)."""
    pairs = partners(toks) if pairs is None else pairs
    close = pairs[open_at]
    spans = _split(toks, open_at + 1, close, pairs)
    return [literal_at(toks, a, 0, pairs)[0] for a, b in spans if _whole(toks, a, b, 0, pairs)]


def _called(toks: list[Token], i: int, name: str, receiver: str | None) -> bool:
    """Whether token ``i`` calls ``name``: plainly (``receiver`` None), or as a method of ``receiver``
    (``"*"``: of anything, as ``s.push(1)``)."""
    if toks[i].text != name or toks[i + 1].text != "(":
        return False
    before = toks[i - 1].text if i else ""
    if receiver is None:
        return before not in (".", "function")
    return before in (".", "?.") and (receiver == "*" or (i >= 2 and toks[i - 2].text == receiver))


def mined_calls(
    texts: list[str], name: str, limit: int = MAX_MINED, receiver: str | None = None
) -> list[Call]:
    """Calls of ``name`` with literal arguments in the base's JavaScript test files (``receiver``: of the
    method ``name`` on that object, or on any when ``"*"``)."""
    out: list[Call] = []
    for text in texts:
        toks = tokens(text)
        pairs = partners(toks)  # once per file: bracket partners looked up, not searched, per call
        for i in range(len(toks) - 1):
            if not _called(toks, i, name, receiver):
                continue
            try:
                call = json_call(arguments_of(toks, i + 1, pairs))
            except (NotLiteral, RecursionError):
                continue
            if call is not None and call.text not in (c.text for c in out):
                out.append(call)
            if len(out) >= limit:
                return out
    return out


def _default(text: str) -> list[Any]:
    try:
        return [literal_at(tokens(text), 0)[0]] if text else []
    except (NotLiteral, RecursionError):
        return []


def _near(v: Any) -> list[Any]:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10**9:
        return [v, v - 1, v + 1]
    return [v]


def js_pool(fn: Changed, param: tuple[str, str]) -> list[Any]:
    """Values for a JavaScript parameter: its default, the changed lines' literals and neighbours, generic
    values."""
    return _default(param[1]) + [v for k in fn.literals for v in _near(k)] + ANY


def own_json(
    fn: Changed, mined: list[Call], limit: int = MAX_OWN_INPUTS,
    pool_of: Callable[[Changed, tuple[str, str]], list[Any]] = js_pool,
) -> list[Call]:  # fmt: skip
    """The mined calls, then each parameter varied in turn over ``pool_of`` it (by default
    :func:`js_pool`) while the others keep their first value."""
    pools = []
    for param in fn.params:
        pool = pool_of(fn, param)
        pools.append(
            [v for i, v in enumerate(pool) if not any(type(v) is type(w) and v == w for w in pool[:i])]
        )
    if any(not pool for pool in pools):
        return list(mined)
    base = [p[0] for p in pools]
    rounds = [list(base)]
    for k in range(1, max((len(p) for p in pools), default=0)):
        for i, pool in enumerate(pools):
            if k < len(pool):
                rounds.append([*base[:i], pool[k], *base[i + 1 :]])
    out = list(mined)
    for args in rounds:
        call = json_call(args)
        if call is not None and call.text not in (c.text for c in out):
            out.append(call)
        if len(out) >= limit:
            break
    return out[:limit]


def read_json_answer(text: str, agent: str, limit: int) -> Read:
    """An agent's inputs: a JSON list of argument lists, each argument a JSON value (or
    ``{"inputs": [...]}``), at most ``limit``."""

    def make(item: Any) -> Call | str:
        if not isinstance(item, list):
            return "an input that is not a list of arguments"
        call = json_call(item, "agent", agent)
        return call if call is not None else "an input too large, too deep, or not plain JSON text"

    return read_list(text, lambda data: any(isinstance(x, list) for x in data), make, limit)
