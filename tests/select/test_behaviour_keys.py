"""Output normalisation: formatting noise never splits a group, real differences always do."""

from __future__ import annotations

import pytest

from memdoor.core.verdict import TestResult
from memdoor.select.behaviour import behaviour_key, group_by_key, normalize_output, result_key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1 2 3\n", "1 2 3"),
        ("  yes  \n\n", "yes"),
        ("1.0\n", "1"),
        ("0.50 2\r\n", "0.5 2"),
        ("-0\n", "0"),
        ("1e3", "1000"),
        ("a b\n  c\n", "a b\nc"),
    ],
)
def test_stdin_outputs_equal_under_the_grader_rules(a, b):
    assert normalize_output(a, "stdin") == normalize_output(b, "stdin")


@pytest.mark.parametrize(
    ("a", "b"),
    [("1 2", "1 3"), ("a  b", "a b"), ("Yes", "yes"), ("1\n2", "1 2"), ("1", "1\n0"), ("nan", "1")],
)
def test_stdin_outputs_that_differ(a, b):
    assert normalize_output(a, "stdin") != normalize_output(b, "stdin")


@pytest.mark.parametrize(
    ("a", "b"),
    [("[1, 2]", "[1,2]"), ("2.0", "2"), ('{"b": 1, "a": [2.0]}', '{"a":[2],"b":1}'), (' "x" ', '"x"')],
)
def test_functional_values_equal_under_python_equality(a, b):
    assert normalize_output(a, "functional") == normalize_output(b, "functional")


@pytest.mark.parametrize(
    ("a", "b"),
    [("true", "1"), ("[1, 2]", "[2, 1]"), ("0.5", "0.25"), ('"1"', "1"), ("null", "0"), ("[]", "{}")],
)
def test_functional_values_that_differ(a, b):
    assert normalize_output(a, "functional") != normalize_output(b, "functional")


def test_functional_text_that_is_not_json_compares_stripped():
    assert normalize_output(" (1, 2) ", "functional") == normalize_output("(1, 2)", "functional")


def test_failed_runs_are_keyed_by_status_not_partial_output():
    crash1 = TestResult(status="runtime_error", output="partial 1")
    crash2 = TestResult(status="runtime_error", output="partial 2")
    timeout = TestResult(status="time_limit", output="partial 1")
    assert result_key(crash1, "stdin") == result_key(crash2, "stdin")
    assert result_key(crash1, "stdin") != result_key(timeout, "stdin")
    assert result_key(TestResult(status="passed", output=None), "stdin") == ("!", "passed")
    assert result_key(TestResult(status="passed", output="anything"), "check") == ("!", "passed")


def test_behaviour_key_and_grouping():
    ok = TestResult(status="passed", output="[1,2]")
    ok_spaced = TestResult(status="passed", output="[1, 2]")
    other = TestResult(status="passed", output="[2,1]")
    keys = [
        behaviour_key([ok, ok], ["functional", "functional"]),
        behaviour_key([ok, other], ["functional", "functional"]),
        behaviour_key([ok_spaced, ok], ["functional", "functional"]),
    ]
    assert group_by_key(keys) == [[0, 2], [1]]
    with pytest.raises(ValueError):
        behaviour_key([ok], ["functional", "functional"])
