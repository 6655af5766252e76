"""Inputs of a changed Rust function: which parameter types the stage can write values of, values of those
types (the changed lines' literals that fit, their neighbours, generic ones), and each JSON argument as a
Rust literal of its declared type (:mod:`memdoor.sandbox.lang.rust_call`).

Every path in a literal is absolute (``::std::string::String::from``, ``::std::vec!``,
``::std::option::Option::Some``): the harness's code is compiled with the file under review, whose
``macro_rules! vec`` or ``struct String`` would otherwise be the one called.

A value that would not compile is refused here, before it reaches a harness: an integer outside its type's
range (``256`` for ``u8``), a number beyond ``f32`` or ``f64`` (an integer of 400 digits), a lone surrogate
(``"\\ud800"``: no Rust ``char`` or ``str`` holds one). One input that does not compile would otherwise stop
every call of its file.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from memdoor.review.differential.inputs import Call, Read
from memdoor.review.differential.targets import Changed
from memdoor.sandbox.lang import rust_call
from memdoor.sandbox.lang.rust_call import INTS, Paths, Unsupported, split_commas

ABSOLUTE = Paths(
    string_from="::std::string::String::from",
    vec="::std::vec!",
    some="::std::option::Option::Some",
    none="::std::option::Option::None",
)
"""The standard items a literal writes, by paths the file under review cannot take (module docstring)."""

MAX_TYPE_DEPTH = 6
"""Types nested deeper (``Vec<Vec<...>>``) are not simple: their functions are not compared."""
_BITS = {"8": 8, "16": 16, "32": 32, "64": 64, "128": 128, "size": 64}
RANGES: dict[str, tuple[int, int]] = {
    t: ((-(1 << (_BITS[t[1:]] - 1)), (1 << (_BITS[t[1:]] - 1)) - 1) if t[0] == "i" else (0, (1 << _BITS[t[1:]]) - 1))
    for t in INTS
}  # fmt: skip
F32_LIMIT = 2.0**128 - 2.0**103
"""Halfway between ``f32::MAX`` and 2**128: a literal below it rounds to a finite ``f32`` (``3.4028235e38``,
as Rust prints ``f32::MAX``), one at or above it to infinity, which does not compile."""
_REFERENCE = re.compile(r"^&\s*(?:'\w+\s+)?(?:mut\s+)?")
_POOLS: dict[str, list[Any]] = {
    "int": [0, 1, -1, 2, 10, 100],
    "float": [0.0, 1.0, -1.5, 0.5, 1e9],
    "bool": [True, False],
    "char": ["a", "Z", "0", " "],
    "str": ["", "a", "abc", "Hello World", " "],
}


def bare(t: str) -> str:
    """The type without its reference (``&'a mut [i32]``: ``[i32]``)."""
    return _REFERENCE.sub("", t.strip())


def _inner(t: str) -> tuple[str, str] | None:
    """``("Vec", T)`` for ``Vec<T>`` and ``[T]``, ``("Option", T)`` for ``Option<T>``, else None."""
    m = re.fullmatch(r"(Vec|Option)\s*<(.+)>", t)
    if m:
        return m.group(1), m.group(2)
    if t.startswith("[") and t.endswith("]") and ";" not in t:
        return "Vec", t[1:-1]
    return None


def simple(t: str, depth: int = 0) -> bool:
    """Whether a parameter type is one whose values the stage can write as Rust literals: integers, ``f32``,
    ``f64``, ``bool``, ``char``, ``String``/``&str``, and ``Vec``/slices/``Option``/tuples of those, nested
    :data:`MAX_TYPE_DEPTH` deep at most."""
    t = bare(t)
    if t in INTS or t in ("f32", "f64", "bool", "char", "String", "str"):
        return True
    if depth >= MAX_TYPE_DEPTH:
        return False
    if (inner := _inner(t)) is not None:
        return simple(inner[1], depth + 1)
    if t.startswith("(") and t.endswith(")"):
        parts = split_commas(t[1:-1])
        return bool(parts) and all(simple(p, depth + 1) for p in parts)
    return False


def _finite(value: int | float) -> float | None:
    """``value`` as the float its literal writes; None when that is no finite ``f64`` (an integer beyond
    ``f64``'s range, an infinity, NaN)."""
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def fits(value: Any, t: str, depth: int = 0) -> bool:
    """Whether ``value`` written as a literal of ``t`` compiles: integers within the type's range, numbers
    within ``f32``'s or ``f64``'s, no lone surrogate in a text (a value of the wrong shape is
    :func:`literal`'s to refuse)."""
    t = bare(t)
    if depth > MAX_TYPE_DEPTH + 1:
        return False
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int) and t in RANGES:
        low, high = RANGES[t]
        return low <= value <= high
    if isinstance(value, int | float) and t in ("f32", "f64"):
        f = _finite(value)
        return f is not None and (t == "f64" or abs(f) < F32_LIMIT)
    if isinstance(value, list):
        inner = _inner(t)
        if inner is not None and inner[0] == "Vec":
            return all(fits(v, inner[1], depth + 1) for v in value)
        if t.startswith("(") and t.endswith(")"):
            return all(fits(v, p, depth + 1) for v, p in zip(value, split_commas(t[1:-1]), strict=False))
    if (inner := _inner(t)) is not None and inner[0] == "Option":
        return fits(value, inner[1], depth + 1)
    return True


def literal(value: Any, t: str) -> str:
    """``value`` (from JSON) as a Rust expression of the type ``t`` that compiles; Unsupported otherwise."""
    if not fits(value, t):
        raise Unsupported(f"{json.dumps(value)[:40]} does not fit {t}")
    return rust_call.literal(value, t, ABSOLUTE)


def arguments(name: str, types: list[str], args: list[Any]) -> list[str]:
    """The call's arguments as Rust literals of the parameter types; Unsupported with the reason otherwise."""
    if len(types) != len(args):
        raise Unsupported(f"{name} takes {len(types)} arguments, the input gives {len(args)}")
    return [literal(a, t) for a, t in zip(args, types, strict=True)]


def values_of(t: str, literals: list[Any], depth: int = 0) -> list[Any]:
    """JSON values of the Rust type ``t``: the literals that fit it (and their neighbours), then generic ones."""
    t = bare(t)
    if depth > 3:
        return []
    if t in INTS:
        near = [
            v for k in literals if isinstance(k, int) and not isinstance(k, bool) for v in (k, k - 1, k + 1)
        ]
        return [v for v in near + _POOLS["int"] if fits(v, t)]
    if t in ("f32", "f64"):
        numbers = [_finite(k) for k in literals if isinstance(k, int | float) and not isinstance(k, bool)]
        found = [k for k in numbers if k is not None]
        return [v for v in found + _POOLS["float"] if fits(v, t)]
    if t in ("bool", "char"):
        return list(_POOLS[t])
    if t in ("String", "str"):
        return [k for k in literals if isinstance(k, str) and fits(k, t)] + _POOLS["str"]
    inner = _inner(t)
    if inner is not None and inner[0] == "Vec":
        items = values_of(inner[1], literals, depth + 1)[:4]
        return [[], items[:1], items[:3], [*items[1:3], *items[:1]], items[:1] * 2]
    if inner is not None:
        return [None, *values_of(inner[1], literals, depth + 1)]
    if t.startswith("(") and t.endswith(")"):
        parts = [values_of(p, literals, depth + 1) for p in split_commas(t[1:-1])]
        if all(parts):
            return [[p[0] for p in parts], [p[min(1, len(p) - 1)] for p in parts]]
    return []


def rust_pool(fn: Changed, param: tuple[str, str]) -> list[Any]:
    return values_of(param[1], fn.literals)


def _why_not(fn: Changed, call: Call) -> str | None:
    """Why ``call``'s arguments cannot be written as literals of ``fn``'s parameter types (None: they can)."""
    try:
        arguments(fn.name, [t for _, t in fn.params], json.loads(call.text))
    except Unsupported as e:
        return str(e)[:200]
    return None


def takes(fn: Changed, call: Call) -> bool:
    """Whether ``call``'s arguments can be written as literals of ``fn``'s parameter types (a smaller input
    the stage derives must fit them as its own inputs do)."""
    return _why_not(fn, call) is None


def refused(fn: Changed, read: Read) -> Read:
    """``read`` without the inputs that cannot be written as literals of ``fn``'s parameter types (each
    refused with its reason)."""
    kept = []
    for call in read.calls:
        if (why := _why_not(fn, call)) is not None:
            read.rejected.append(why)
            continue
        kept.append(call)
    read.calls = kept
    return read
