"""Deciding whether a candidate's raw output passes a test, by the official graders' rules.

Runs in the supervisor (trusted, outside the sandbox): expected outputs never enter the sandbox. Everything
here that reads a candidate's output takes time linear in its size (which the supervisor caps): the output
comes from the sandbox, where a hostile program can forge it, and a slow parse would hold up grading (and,
holding the GIL, the supervisor's other threads). No quadratic conversion (decimal text to int, int to
decimal text, gcd) ever runs on a number of unbounded size that a candidate chose.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

MAX_RESULT_DIGITS = 4300
"""Longest decimal integer literal read from a returned value. The harness writes integers of absolute
value below 2**9000 (at most 2,710 digits) in decimal and bigger ones as ``{"$int": hex}``, so a longer
decimal literal was forged; converting it would be quadratic in its length."""

_CHUNK = 600  # int() converts at most this many digits at once: under the smallest int/str limit (640)
_SHOWN_INT_BITS = 10000  # integers shown in decimal up to this size, in hex beyond (int -> str is quadratic)


class UnreadableResult(ValueError):
    """A returned value that the honest harness cannot have sent (malformed or forged)."""

    def __init__(self, why: str):
        super().__init__(f"unreadable result: {why}")


# ---------------------------------------------------------------- stdin: LiveCodeBench's rule
def _line_count(stripped: str) -> int:
    return stripped.count("\n") + 1


def _decimals_equal(got: str, expected: str) -> bool:
    """``[Decimal(t) for t in got.split()] == [Decimal(t) for t in expected.split()]``, where a token that
    is not a number makes the lines differ, without building the candidate's token list first: its tokens
    are split only up to the expected count (a line of millions of tokens costs no memory) and compared
    pair by pair. ``Decimal`` of a token is linear in its length, exact for any length and exponent."""
    want = expected.split()
    have = got.split(None, len(want))
    if len(have) != len(want):
        return False
    try:
        return all(Decimal(g) == Decimal(e) for g, e in zip(have, want, strict=True))
    except ArithmeticError:  # not a number (InvalidOperation), or a signalling NaN compared
        return False


def stdin_matches(got: str, expected: str) -> tuple[bool, str]:
    """LiveCodeBench's stdin rule: strip both, split lines, strip each line, same count, each line equal as
    text or as lists of ``Decimal`` tokens (no epsilon). Returns (passed, short reason when not).

    Lines are counted before the output is split, so a flood of lines costs no memory."""
    got, expected = got.strip(), expected.strip()
    n_got, n_exp = _line_count(got), _line_count(expected)
    if n_got != n_exp:
        return False, f"output has {n_got} lines, expected {n_exp}"
    for n, (g, e) in enumerate(zip(got.split("\n"), expected.split("\n"), strict=True), 1):
        g, e = g.strip(), e.strip()
        if g != e and not _decimals_equal(g, e):
            return False, f"line {n} differs"
    return True, ""


def _number_key(token: str) -> str | None:
    """A canonical text of ``Decimal(token)``'s value (equal exactly when the values are equal), or None when
    the token is not a number or is a NaN (which equals nothing). Context-free, so never rounded (unlike
    ``Decimal.normalize``, which rounds to 28 digits), and linear in the token's length."""
    try:
        d = Decimal(token)
    except ArithmeticError:
        return None
    if d.is_nan():
        return None
    if d.is_infinite():
        return "-inf" if d.is_signed() else "inf"
    sign, digits, exponent = d.as_tuple()
    text = "".join(map(str, digits))
    significant = text.rstrip("0")
    if not significant:
        return "0"  # -0 == 0
    return f"{'-' if sign else ''}{significant.lstrip('0')}e{exponent + len(text) - len(significant)}"


def stdin_key(text: str) -> tuple[tuple[str, ...], ...]:
    """The canonical form of a stdin output under LiveCodeBench's rule: ``stdin_matches(a, b)`` passes exactly
    when ``stdin_key(a) == stdin_key(b)``. Each stripped line becomes ``("n", numbers...)`` when every token
    is a number, else ``("s", line)``. Selectors group candidates by it (one rule for grading and voting);
    it splits the whole text, so use it on outputs already capped in size."""
    out: list[tuple[str, ...]] = []
    for line in text.strip().split("\n"):
        line = line.strip()
        numbers = [_number_key(t) for t in line.split()]
        if numbers and all(n is not None for n in numbers):
            out.append(("n", *numbers))  # type: ignore[arg-type]
        else:
            out.append(("s", line))
    return tuple(out)


# ---------------------------------------------------------------- functional: decoding returned values
def _int_text(n: int) -> str:
    return str(n) if n.bit_length() <= _SHOWN_INT_BITS else hex(n)


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


class Rational:
    """A returned ``Fraction``, kept as the numerator and denominator the harness sent (in lowest terms,
    denominator positive). Not a ``Fraction``: building one runs a gcd, quadratic in the size of numbers a
    candidate chose. Equal exactly when the ``Fraction`` is, to every value an expected output can hold."""

    __slots__ = ("den", "num")

    def __init__(self, num: int, den: int):
        self.num, self.den = num, den

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rational | Fraction):
            return self.num == other.numerator and self.den == other.denominator
        if isinstance(other, int):  # bool included, as Fraction
            return self.den == 1 and self.num == other
        if isinstance(other, float):
            if not math.isfinite(other):
                return False
            p, q = other.as_integer_ratio()
            return self.num == p and self.den == q
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.num, self.den))

    @property
    def numerator(self) -> int:
        return self.num

    @property
    def denominator(self) -> int:
        return self.den

    def __repr__(self) -> str:
        return f"Fraction({_int_text(self.num)}, {_int_text(self.den)})"


class OtherKeysDict:
    """A returned dict with a key that is not a string. An expected output's dicts (JSON objects) have only
    string keys, and no such key equals a string, so it equals nothing; it is kept as its (key, value)
    pairs, never hashed (integer keys chosen to collide would make building a dict quadratic)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[Any, Any]]):
        self.pairs = pairs

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<dict of {len(self.pairs)} items, not all keyed by strings>"


def _int_from_digits(digits: str) -> int:
    """The int of a string of decimal digits, exact for any length: halves converted and combined (so
    never quadratic in the length, and never over the process's int/str digit limit)."""
    if len(digits) <= _CHUNK:
        return int(digits)
    low = len(digits) // 2
    return _int_from_digits(digits[:-low]) * 10**low + _int_from_digits(digits[-low:])


def _json_int(text: str) -> int:
    """A JSON integer literal (``-?digits``) of any length: used for expected outputs (trusted)."""
    if len(text) <= _CHUNK:
        return int(text)
    if text.startswith("-"):
        return -_int_from_digits(text[1:])
    return _int_from_digits(text)


def _result_int(text: str) -> int:
    if len(text) <= _CHUNK:  # nearly every integer: one call, as cheap as json's own
        return int(text)
    if len(text) > MAX_RESULT_DIGITS + 1:
        raise UnreadableResult(
            f"a decimal integer of {len(text)} characters (the harness sends big integers in hex)"
        )
    return _json_int(text)


def _need(ok: bool, tag: str) -> None:
    if not ok:
        raise UnreadableResult(f"malformed {tag}")


def _number(v: Any) -> bool:
    return type(v) in (int, float)


def _dict(pairs: Any) -> dict | OtherKeysDict:
    _need(isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs), "$dict")
    if all(type(k) is str for k, _ in pairs):  # str hashes are seeded per process: no collisions to force
        return {k: v for k, v in pairs}
    return OtherKeysDict([(k, v) for k, v in pairs])


def _hook(obj: dict[str, Any]) -> Any:
    if "$tuple" in obj:
        _need(isinstance(obj["$tuple"], list), "$tuple")
        return tuple(obj["$tuple"])
    if "$dict" in obj:
        return _dict(obj["$dict"])
    if "$int" in obj:
        _need(isinstance(obj["$int"], str), "$int")
        return int(obj["$int"], 16)  # base 16: linear
    if "$float" in obj:
        _need(isinstance(obj["$float"], str) and len(obj["$float"]) <= 64, "$float")
        return float(obj["$float"])
    if "$fraction" in obj:
        parts = obj["$fraction"]
        _need(isinstance(parts, list) and len(parts) == 2 and all(type(p) is int for p in parts), "$fraction")
        _need(parts[1] > 0, "$fraction")
        return Rational(parts[0], parts[1])
    if "$decimal" in obj:
        _need(isinstance(obj["$decimal"], str), "$decimal")
        return Decimal(obj["$decimal"])  # linear in its length; exact for any exponent
    if "$complex" in obj:
        parts = obj["$complex"]
        _need(isinstance(parts, list) and len(parts) == 2 and all(_number(p) for p in parts), "$complex")
        return complex(*parts)
    if "$ndarray" in obj:
        _need(type(obj.get("size")) is int, "$ndarray")
        return OneElementArray(obj["$ndarray"], obj["size"], str(obj.get("repr", "")))
    if "$opaque" in obj:
        return Opaque(str(obj["$opaque"]), str(obj.get("repr", "")))
    raise UnreadableResult("unknown tag")


def decode_value(payload: bytes) -> Any:
    """The candidate's returned value from the harness's exact encoding, in time linear in the payload.
    Raises UnreadableResult (a ValueError) when the harness cannot have sent it."""
    try:
        return json.loads(payload.decode("utf-8", "surrogatepass"), object_hook=_hook, parse_int=_result_int)
    except UnreadableResult:
        raise
    except (ValueError, TypeError, KeyError, RecursionError, ArithmeticError) as e:
        raise UnreadableResult(type(e).__name__) from e


def expected_value(expected: str) -> Any:
    """``json.loads`` of an expected output, exact for integers of any length."""
    return json.loads(expected, parse_int=_json_int)


def functional_matches(value: Any, expected: str) -> tuple[bool, str]:
    """LiveCodeBench's functional rule: a tuple result becomes a list; pass iff ``result == json.loads(expected)``."""
    if isinstance(value, tuple):
        value = list(value)
    try:
        want = expected_value(expected)
    except (ValueError, RecursionError):
        return False, "expected output is not valid JSON"
    try:
        ok = bool(value == want)
    except (ArithmeticError, RecursionError) as e:  # a signalling NaN compared; nested too deep
        return False, f"comparing the returned value raised {type(e).__name__}"
    return ok, "" if ok else "returned value differs"


# ---------------------------------------------------------------- what a TestResult shows
def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict | OtherKeysDict):
        items = value.pairs if isinstance(value, OtherKeysDict) else value.items()
        return {k if isinstance(k, str) else json.dumps(_plain(k)): _plain(v) for k, v in items}
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _SHOWN_INT_BITS:
        return hex(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, Rational | Decimal | complex | Opaque | OneElementArray):
        return repr(value)
    return value


def value_text(value: Any, raw: bytes) -> str:
    """The JSON text of a returned value as the TestResult records it (tuples as lists; others by repr);
    ``raw`` (the harness's encoding of it) when it cannot be rendered (nested too deep)."""
    try:
        return json.dumps(_plain(value), ensure_ascii=False)
    except (ValueError, RecursionError):
        return raw.decode("utf-8", "replace")


def keep(text: str, limit: int) -> str:
    """``text`` if it is at most ``limit`` characters, else a prefix plus the length and SHA-256 of the whole
    (so that two different long outputs never look the same)."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{text[:limit]}…[{len(text)} chars, sha256 {digest}]"
