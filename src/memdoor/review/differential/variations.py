"""Variations of known-good calls: one argument at a time changed a little, by its type.

A call found in the base's tests or doctests (:mod:`.examples`) is real usage, and the public tests
already pass on it; the bug a change brings often shows on a neighbour of it: one more or one less, the
empty or the one-element case, the reversed, sorted or negated list, another case of the letters, the
changed lines' own literals put in, two arguments swapped. Each argument of each call is varied in turn
(the others kept). The order is deterministic (no randomness) and puts variety first: every kind of
variation once, then all of them round robin over the calls, so that a cap keeps the most telling ones.
Only literal values are made (numbers, strings, bytes, booleans, None, and lists, tuples, dicts and sets
of them), items varied two levels deep at most; the caller keeps them within the size caps
(``make_call``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_VARIATIONS = 20
"""Variations of one value at most."""
MAX_BOUNDARIES = 6
"""Values near the changed lines' literals tried for one value at most."""
MAX_LENGTH = 200
"""Longest sequence or string that is doubled or extended."""
MAX_DEPTH = 2
"""Items of a list, tuple, dict or set are varied this many levels deep at most."""

_VALUE_ERRORS = (TypeError, ValueError, OverflowError, MemoryError, RecursionError)
"""What making a variation of a value may raise (items that do not compare, a number too large)."""


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _boundary_values(boundaries: list[Any], kind: type) -> list[Any]:
    """The changed lines' literals of ``kind`` (numbers: k - 1, k, k + 1): where a boundary moved."""
    out: list[Any] = []
    for k in boundaries:
        if kind is str and isinstance(k, str) and k.strip():
            out.append(k)
        elif kind in (int, float) and _numeric(k) and abs(k) < 10**9:
            out += [kind(k) - 1, kind(k), kind(k) + 1]
    return out[:MAX_BOUNDARIES]


def _number(v: int | float, boundaries: list[Any]) -> list[Any]:
    out: list[Any] = [v + 1, v - 1, 0 * v, -v, *_boundary_values(boundaries, type(v))]
    out += [v * 2, v // 2 if isinstance(v, int) else v / 2]
    out += [v + 0.5, float(round(v)), v + 1e-9] if isinstance(v, float) else [1, -1]
    return out


def _text(v: str, boundaries: list[Any]) -> list[Any]:
    out: list[Any] = ["", v[:1], v[::-1], v.swapcase()]
    # a word of the changed lines, alone and added to the text
    for k in _boundary_values(boundaries, str)[:2]:
        out += [k, f"{v} {k}", f"{k} {v}"]
    out += [v + " ", " " + v, v[1:], v[:-1]]
    if len(v) <= MAX_LENGTH:
        out += [v * 2, v + v[-1:]]
    out += [v.upper(), v.lower(), v.replace(" ", ""), v + "z", "Z" + v, v + "9"]
    return out


def _sequence(v: list[Any], boundaries: list[Any], depth: int) -> list[list[Any]]:
    """Variations of a list's items (the caller turns them back into its type)."""
    out: list[list[Any]] = [[], v[:1], v[1:], v[:-1], v[::-1]]
    try:
        out.append(sorted(v))
    except _VALUE_ERRORS:  # items that do not compare
        pass
    if v and all(map(_numeric, v)):
        out.append([-x for x in v])  # the signs turned
    if v and len(v) <= MAX_LENGTH:
        out += [v[:1] + v, v + v[-1:], v + v]
    for index in (0, -1):  # an item varied by its own type (its first few variations)
        if v and depth < MAX_DEPTH:
            for item in variations(v[index], boundaries, depth + 1)[:3]:
                changed = list(v)
                changed[index] = item
                out.append(changed)
    if len(v) >= 2:
        out.append([v[-1], *v[1:-1], v[0]])  # the ends swapped
    return out


def _mapping(v: dict[Any, Any], boundaries: list[Any], depth: int) -> list[Any]:
    out: list[Any] = [{}]
    keys = list(v)
    if keys:
        out += [{k: v[k] for k in keys[1:]}, {k: v[k] for k in keys[:-1]}]
    if keys and depth < MAX_DEPTH:
        for item in variations(v[keys[0]], boundaries, depth + 1)[:3]:
            out.append({**v, keys[0]: item})
        for key in variations(keys[0], boundaries, depth + 1)[:2]:
            if key not in v:
                try:
                    out.append({key: v[keys[0]], **{k: v[k] for k in keys[1:]}})
                except TypeError:  # an unhashable key
                    pass
    return out


def _set(v: set[Any] | frozenset[Any], boundaries: list[Any], depth: int) -> list[Any]:
    try:
        items = sorted(v)
    except _VALUE_ERRORS:
        items = list(v)
    out: list[Any] = [type(v)()]
    if items:
        out += [type(v)(items[1:]), type(v)(items[:-1])]
    if items and depth < MAX_DEPTH:
        for extra in variations(items[-1], boundaries, depth + 1)[:2]:
            try:
                out.append(type(v)([*items, extra]))
            except TypeError:
                pass
    return out


def variations(value: Any, boundaries: Sequence[Any] = (), depth: int = 0) -> list[Any]:
    """Values near ``value``, of its type, most telling first, without ``value`` itself or repeats;
    ``boundaries`` (the changed lines' literals) add their neighbours (numbers) or themselves (strings)."""
    raw: list[Any]
    try:
        if isinstance(value, bool):
            raw = [not value]
        elif isinstance(value, int | float):
            raw = _number(value, list(boundaries))
        elif isinstance(value, str):
            raw = _text(value, list(boundaries))
        elif isinstance(value, bytes):
            raw = [b"", value[:1], value[::-1], value[1:], value + value[-1:]]
        elif isinstance(value, list):
            raw = _sequence(value, list(boundaries), depth)
        elif isinstance(value, tuple):
            raw = [tuple(s) for s in _sequence(list(value), list(boundaries), depth)]
        elif isinstance(value, dict):
            raw = _mapping(value, list(boundaries), depth)
        elif isinstance(value, set | frozenset):
            raw = _set(value, list(boundaries), depth)
        else:
            raw = []
    except _VALUE_ERRORS:
        raw = []
    out: list[Any] = []
    for v in raw:
        if not _same(v, value) and not any(_same(v, w) for w in out):
            out.append(v)
    return out[:MAX_VARIATIONS]


def _kind(value: Any) -> str:
    return "number" if _numeric(value) else type(value).__name__


def swapped(args: list[Any]) -> list[list[Any]]:
    """The call with two arguments of one kind swapped (every pair): argument order is a behaviour too."""
    out = []
    for i in range(len(args)):
        for j in range(i + 1, len(args)):
            if _kind(args[i]) == _kind(args[j]) and not _same(args[i], args[j]):
                changed = list(args)
                changed[i], changed[j] = args[j], args[i]
                out.append(changed)
    return out


def sign_turned(value: Any, varied: Any) -> bool:
    """Whether ``varied`` is ``value`` with its sign turned (a number, or every number of a list or tuple):
    a value outside the calls' own domain, where a function may run for ever (a loop down to zero)."""
    if _numeric(value) and _numeric(varied):
        return value != 0 and varied != 0 and (value > 0) != (varied > 0)
    same_length = (
        isinstance(value, list | tuple) and isinstance(varied, list | tuple) and len(value) == len(varied)
    )
    if same_length and value:
        return all(_numeric(x) and _numeric(y) and x == -y for x, y in zip(value, varied, strict=True))
    return False


def varied_calls(calls: list[list[Any]], boundaries: Sequence[Any] = ()) -> list[list[Any]]:
    """Every call with one argument varied (or two swapped): each kind of variation first once (the n-th
    variation on the (n mod len(calls))-th call), then all of them round robin (the first variation of
    each argument of each call, then the second, ...); no call twice, none of ``calls`` itself. A turned
    sign is tried once per argument (:func:`sign_turned`): each input that never ends costs the whole
    time limit on both versions."""
    ranked = []
    for c, args in enumerate(calls):
        rows = [[(i, v) for v in variations(arg, boundaries)] for i, arg in enumerate(args)]
        rows.append([(-1, s) for s in swapped(args)])
        for a, row in enumerate(rows):
            for rank, (i, v) in enumerate(row):
                once = c == rank % len(calls)
                if once or i < 0 or not sign_turned(args[i], v):
                    changed = v if i < 0 else [*args[:i], v, *args[i + 1 :]]
                    ranked.append(((not once, rank, c, a), changed))
    seen = {repr(args) for args in calls}
    out: list[list[Any]] = []
    for _, args in sorted(ranked, key=lambda r: r[0]):
        if (text := repr(args)) not in seen:
            seen.add(text)
            out.append(args)
    return out
