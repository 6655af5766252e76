"""Issue 11, item 2: reading a candidate's output is linear in its size and bounded, and stays exact.

A result comes from the sandbox, where the candidate can forge it. Parsing it must never run a quadratic
conversion on a number the candidate chose (a 300,000-digit integer through ``Decimal`` stalled grading
~9 s): decimal integer literals are capped (the harness sends big integers in hex), fractions are never
normalised with a gcd, dicts with non-string keys are never hashed, and the stdin comparison splits a
candidate's output only as far as the expected output goes. Honest outputs compare exactly as before.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import pytest
from sandbox_helpers import fn_tests, stdin_tests

from memdoor.core.problem import Problem
from memdoor.judging.programs import grade_many
from memdoor.sandbox import compare

MILLION = 1_000_000


# ---------------------------------------------------------------- functional results
def test_a_forged_long_decimal_integer_is_refused():
    with pytest.raises(compare.UnreadableResult, match=f"a decimal integer of {MILLION} characters"):
        compare.decode_value(b"7" * MILLION)
    with pytest.raises(compare.UnreadableResult):
        compare.decode_value(b"[1, 2, -" + b"9" * (compare.MAX_RESULT_DIGITS + 1) + b"]")


def test_integers_the_harness_sends_are_exact():
    """Up to the cap in decimal (the harness writes |n| < 2**9000, 2,710 digits, that way), any size in hex."""
    n = 10 ** (compare.MAX_RESULT_DIGITS - 1) + 12345  # MAX_RESULT_DIGITS digits
    digits = "1" + "0" * (compare.MAX_RESULT_DIGITS - 6) + "12345"
    assert compare.decode_value(digits.encode()) == n
    assert compare.decode_value(b"-" + digits.encode()) == -n
    big = 10**MILLION + 1
    assert compare.decode_value(json.dumps({"$int": hex(big)}).encode()) == big
    assert compare.decode_value(json.dumps({"$int": hex(-big)}).encode()) == -big


def test_long_expected_integers_are_exact():
    """Expected outputs (trusted) may hold integers of any length: converted exactly, never quadratically."""
    expected = "[1" + "0" * 99_999 + "7, -1" + "0" * 5000 + "]"
    assert compare.expected_value(expected) == [10**100_000 + 7, -(10**5000)]
    assert compare.functional_matches(10**100_000 + 7, "1" + "0" * 99_999 + "7") == (True, "")
    assert compare.functional_matches(10**100_000, "1" + "0" * 99_999 + "7")[0] is False


FRACTIONS = [Fraction(1, 2), Fraction(3), Fraction(-7, 3), Fraction(0), Fraction(1, 3), Fraction(10**30, 7)]
OTHERS = [0.5, 1, 3, 3.0, -7, 0, 0.0, -0.0, True, False, 1 / 3, float("inf"), float("nan"), "1/2", None, [1]]


@pytest.mark.parametrize("f", FRACTIONS, ids=str)
def test_a_returned_fraction_compares_as_a_fraction_without_a_gcd(f):
    r = compare.decode_value(json.dumps({"$fraction": [f.numerator, f.denominator]}).encode())
    for other in OTHERS:
        assert (r == other) == (f == other), other
        assert (other == r) == (other == f), other
    assert r == f and r == compare.Rational(f.numerator, f.denominator)


def test_a_fraction_of_huge_forged_components_is_read_in_linear_time():
    """Fraction(a, b) would run gcd(a, b): quadratic, over a second for 1,000,000-bit components."""
    a, b = (1 << MILLION) - 1, (1 << MILLION) - 3
    r = compare.decode_value(json.dumps({"$fraction": [{"$int": hex(a)}, {"$int": hex(b)}]}).encode())
    assert isinstance(r, compare.Rational) and r.num == a and r.den == b
    assert compare.functional_matches(r, "1") == (False, "returned value differs")
    assert compare.value_text(r, b"").startswith('"Fraction(0xfff')


@pytest.mark.parametrize(
    "payload",
    [
        {"$fraction": [1, 0]},
        {"$fraction": ["1e999999999", 1]},
        {"$fraction": [1]},
        {"$complex": [{"$int": hex(1 << 5000)}, 0.0]},
        {"$complex": ["1+2j", 0.0]},
        {"$ndarray": 1, "size": "9" * 5000},
        {"$int": 12},
        {"$float": "1" * 100},
        {"$decimal": [0, [1], 5]},
        {"$dict": [[1]]},
        {"$tuple": "abc"},
        {"$unknown": 1},
    ],
    ids=lambda p: next(iter(p)),
)
def test_malformed_tags_are_unreadable_not_errors(payload):
    with pytest.raises(compare.UnreadableResult):
        compare.decode_value(json.dumps(payload).encode())


def test_dicts_with_colliding_integer_keys_are_never_hashed():
    """Integer keys that all hash alike would make building a dict quadratic. An expected output's dicts
    have string keys only, so a dict with another key equals nothing and is kept as its pairs."""
    m = (1 << 61) - 1  # hash(k * m) == 0 for every k
    pairs = [[k * m, k] for k in range(1, 200_000)]
    value = compare.decode_value(json.dumps({"$dict": pairs}).encode())
    assert isinstance(value, compare.OtherKeysDict) and len(value.pairs) == len(pairs)
    assert compare.functional_matches(value, "{}")[0] is False
    assert compare.value_text(value, b"").startswith('{"2305843009213693951": 1')
    assert compare.decode_value(b'{"$dict": [["a", 1], ["b", {"$tuple": [2]}]]}') == {"a": 1, "b": (2,)}
    assert compare.functional_matches({"a": 1, "b": [2]}, '{"b": [2], "a": 1}') == (True, "")


def test_huge_decimals_and_signalling_nans_compare_without_blowing_up():
    v = compare.decode_value(json.dumps({"$decimal": "1e999999999999999999"}).encode())
    assert v == Decimal("1e999999999999999999") and compare.functional_matches(v, "1")[0] is False
    v = compare.decode_value(json.dumps({"$decimal": "7" * MILLION}).encode())
    assert compare.functional_matches(v, "7")[0] is False
    ok, why = compare.functional_matches(compare.decode_value(b'{"$decimal": "sNaN"}'), "1")
    assert not ok and "InvalidOperation" in why


def test_a_value_nested_too_deep_to_show_is_shown_as_sent():
    deep = b"[" * 900 + b"]" * 900
    value = compare.decode_value(deep)
    assert compare.value_text(value, deep) in (json.dumps(json.loads(deep)), deep.decode())


# ---------------------------------------------------------------- stdin comparison
def reference_stdin_matches(got: str, expected: str) -> bool:
    """LiveCodeBench's rule as testing_util writes it (lists of Decimal per line; an exception fails)."""
    g_lines = [x.strip() for x in got.strip().split("\n")]
    e_lines = [x.strip() for x in expected.strip().split("\n")]
    if len(g_lines) != len(e_lines):
        return False
    for g, e in zip(g_lines, e_lines, strict=True):
        if g == e:
            continue
        try:
            if [Decimal(t) for t in g.split()] != [Decimal(t) for t in e.split()]:
                return False
        except (InvalidOperation, ValueError):
            return False
    return True


TOKENS = ["1e5", "100000", "-0", "0", "+0", "0.10", "0.1", "+1", "1", "007", "7", "1_000", "1000", "1E+3"]
TOKENS += [
    ".5",
    "0.5",
    "5.",
    "5",
    "-1e-3",
    "-0.001",
    "NaN",
    "nan",
    "inf",
    "Infinity",
    "-inf",
    "abc",
    "١٢",
    "12",
]
TOKENS += ["1e999999999", "10e999999998", "1e-999999999", "0e5", "0E-7", "3.0", "3", "0x10", "16", "", "1 2"]


def test_stdin_comparison_agrees_with_the_official_rule_on_every_pair_of_tokens():
    for g in TOKENS:
        for e in TOKENS:
            for got, expected in ((g, e), (f"{g} 1\n2", f"{e} 1\n2"), (f"x\n{g}", f"x\n{e}\n")):
                assert compare.stdin_matches(got, expected)[0] == reference_stdin_matches(got, expected), (
                    g,
                    e,
                )


def test_very_long_numeric_tokens_compare_exactly():
    zeros = "0" * MILLION
    assert compare.stdin_matches(f"1e{MILLION}", "1" + zeros) == (True, "")
    assert compare.stdin_matches("1" + zeros, "1" + zeros[1:] + "1")[0] is False
    assert compare.stdin_matches("0." + zeros + "1", f"1e-{MILLION + 1}") == (True, "")
    assert compare.stdin_matches("1e" + "9" * MILLION, "1")[0] is False  # Decimal refuses the exponent
    assert compare.stdin_matches("-" + "0" * MILLION, "0") == (True, "")


def test_a_flood_of_tokens_or_lines_is_not_split_past_the_expected_output():
    assert compare.stdin_matches("0 " * 5 * MILLION, "0 0 0") == (False, "line 1 differs")
    assert compare.stdin_matches("0\n" * 5 * MILLION, "0") == (
        False,
        f"output has {5 * MILLION} lines, expected 1",
    )
    assert compare.stdin_matches("0 0 0 ", "0.0 0 -0") == (True, "")


# ---------------------------------------------------------------- through the real sandbox
FORGE_HUGE = (
    "import json, os, struct, sys\n"
    "def f(x):\n"
    "    h = json.dumps({'ev': 'res', 'i': 0, 'status': 'ok', 't': 0.0}).encode()\n"
    f"    p = b'7' * {MILLION}\n"
    "    os.write(int(sys.argv[1]), struct.pack('>II', len(h), len(p)) + h + p)\n"
    "    return x + 1\n"
)
FN = Problem(id="inc", statement="x + 1", public_tests=fn_tests(("1", "2")), hidden_tests=fn_tests(("5", "6")),
             func_name="f", prelude="livecodebench")  # fmt: skip
STDIN = Problem(
    id="big",
    statement="print 10**1000000",
    public_tests=stdin_tests(("\n", "1" + "0" * MILLION)),
    prelude="livecodebench",
)


def test_forged_and_huge_results_are_graded_and_the_neighbours_keep_their_verdicts(sandbox):
    """Hostile candidates next to honest ones, two graded at once: each gets its own verdict."""
    jobs = [
        (FN, FORGE_HUGE),  # a forged 1,000,000-digit decimal result
        (FN, "def f(x):\n    return x + 1"),
        (FN, "def f(x):\n    return 10 ** 1000000"),  # honest, huge: sent in hex, wrong
        (STDIN, "print('1' + '0' * 999999 + '1')"),  # 1,000,000 digits, wrong
        (FN, "def f(x):\n    return x + 1"),
        (STDIN, "print('1e1000000')"),  # right: equal as Decimal
        (STDIN, "print('0 ' * 5000000)"),
        (FN, "def f(x):\n    return x + 1"),
    ]
    verdicts = list(grade_many(jobs, sandbox, workers=2))
    statuses = [v.status for v in verdicts]
    assert statuses == ["runtime_error", "passed", "wrong_answer", "wrong_answer", "passed", "passed",
                        "wrong_answer", "passed"], verdicts  # fmt: skip
    assert f"a decimal integer of {MILLION} characters" in verdicts[0].tests[0].detail


def test_the_selectors_stdin_key_is_the_graders_rule():
    """One rule for grading and voting: two outputs have equal keys exactly when one passes against the other."""
    for g in TOKENS:
        for e in TOKENS:
            for got, expected in ((g, e), (f"{g} 1\n2", f"{e}  1\n2 "), (f"x\n{g}", f"x\n{e}\n")):
                same = compare.stdin_key(got) == compare.stdin_key(expected)
                assert same == compare.stdin_matches(got, expected)[0], (got, expected)


def test_the_stdin_key_is_exact_beyond_decimal_precision():
    """Decimal.normalize rounds to 28 digits; the key does not: these differ in the 31st digit."""
    a, b = "1." + "0" * 29 + "1", "1"
    assert compare.stdin_matches(a, b)[0] is False
    assert compare.stdin_key(a) != compare.stdin_key(b)
    assert compare.stdin_key("100 -0 0.50") == compare.stdin_key("1e2 0 .5")
