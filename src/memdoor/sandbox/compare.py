"""Deciding whether a candidate's raw output passes a test, by the official graders' rules.

Runs in the supervisor (trusted, outside the sandbox): expected outputs never enter the sandbox.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdin_matches(got: str, expected: str) -> tuple[bool, str]:
    """LiveCodeBench's stdin rule: strip both, split lines, strip each line, same count, each line equal as
    text or as lists of ``Decimal`` tokens (no epsilon). Returns (passed, short reason when not)."""
    got_lines, exp_lines = _stripped_lines(got), _stripped_lines(expected)
    if len(got_lines) != len(exp_lines):
        return False, f"output has {len(got_lines)} lines, expected {len(exp_lines)}"
    for n, (g, e) in enumerate(zip(got_lines, exp_lines, strict=True), 1):
        if g == e:
            continue
        gd, ed = _decimals(g), _decimals(e)
        if gd is None or ed is None or gd != ed:
            return False, f"line {n} differs"
    return True, ""


class Opaque:
    """A returned value of a type JSON cannot hold (set, deque, user class): equal to nothing."""

    __slots__ = ("repr", "type")

    def __init__(self, type_name: str, text: str):
        self.type, self.repr = type_name, text

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return self.repr


class OneElementArray:
    """A numpy array returned by the candidate. The official grader evaluates ``array == expected``
    (elementwise, broadcasting) for its truth: only a one-element array whose element equals the one
    element of ``expected`` (a scalar or nested one-element lists) passes; other sizes fail."""

    __slots__ = ("item", "repr", "size")

    def __init__(self, item: Any, size: int, text: str):
        self.item, self.size, self.repr = item, size, text

    def __eq__(self, other: object) -> bool:
        if self.size != 1:
            return False
        while isinstance(other, list) and len(other) == 1:
            other = other[0]
        return not isinstance(other, list | dict) and bool(self.item == other)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return self.repr


def _int(text: str) -> int:
    # Exact for any length, without touching the process-wide int/str digit limit.
    return int(text) if len(text) < 4000 else int(Decimal(text))


def _hook(obj: dict[str, Any]) -> Any:
    if "$tuple" in obj:
        return tuple(obj["$tuple"])
    if "$dict" in obj:
        return {k: v for k, v in obj["$dict"]}
    if "$int" in obj:
        return int(obj["$int"], 16)
    if "$float" in obj:
        return float(obj["$float"])
    if "$fraction" in obj:
        return Fraction(*obj["$fraction"])
    if "$decimal" in obj:
        return Decimal(obj["$decimal"])
    if "$complex" in obj:
        return complex(*obj["$complex"])
    if "$ndarray" in obj:
        return OneElementArray(obj["$ndarray"], int(obj.get("size", 0)), str(obj.get("repr", "")))
    if "$opaque" in obj:
        return Opaque(str(obj["$opaque"]), str(obj.get("repr", "")))
    raise ValueError("unknown tag")


def decode_value(payload: bytes) -> Any:
    """The candidate's returned value from the harness's exact encoding. Raises ValueError when unreadable."""
    try:
        return json.loads(payload.decode("utf-8", "surrogatepass"), object_hook=_hook, parse_int=_int)
    except (ValueError, TypeError, KeyError, RecursionError, InvalidOperation) as e:
        raise ValueError(f"unreadable result: {type(e).__name__}") from e


def expected_value(expected: str) -> Any:
    """``json.loads`` of an expected output, exact for very long integers."""
    return json.loads(expected, parse_int=_int)


def functional_matches(value: Any, expected: str) -> tuple[bool, str]:
    """LiveCodeBench's functional rule: a tuple result becomes a list; pass iff ``result == json.loads(expected)``."""
    if isinstance(value, tuple):
        value = list(value)
    try:
        ok = bool(value == expected_value(expected))
    except (ValueError, RecursionError):
        return False, "expected output is not valid JSON"
    return ok, "" if ok else "returned value differs"


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k if isinstance(k, str) else json.dumps(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10000:
        return hex(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, Fraction | Decimal | complex | Opaque | OneElementArray):
        return repr(value)
    return value


def value_text(value: Any) -> str:
    """The JSON text of a returned value as the TestResult records it (tuples as lists; others by repr)."""
    try:
        return json.dumps(_plain(value), ensure_ascii=False)
    except (ValueError, RecursionError):
        return repr(value)


def keep(text: str, limit: int) -> str:
    """``text`` if it is at most ``limit`` characters, else a prefix plus the length and SHA-256 of the whole
    (so that two different long outputs never look the same)."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{text[:limit]}…[{len(text)} chars, sha256 {digest}]"
