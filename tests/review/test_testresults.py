"""Per-test results read from real runners' output (samples as pytest 9, node 20 and cargo print them)."""

from __future__ import annotations

from memdoor.review.testresults import parse_results

PYTEST = """..F.                                                                     [100%]
=================================== FAILURES ===================================
__________________________________ test_scale __________________________________

    def test_scale():
>       assert scale([1, 2]) == [2, 4]
E       assert [3, 5] == [2, 4]

test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED test_calc.py::test_scale - assert [3, 5] == [2, 4]
1 failed, 3 passed in 0.05s
"""
TAP = """TAP version 13
# Subtest: good one
ok 1 - good one
  ---
  duration_ms: 1.169262
  ...
# Subtest: bad one
not ok 2 - bad one
  ---
  duration_ms: 1.033064
  error: |-
    Expected values to be strictly equal:

    1 !== 2

  code: 'ERR_ASSERTION'
  ...
1..2
# pass 1
# fail 1
"""
SPEC = "✔ good one (8.340041ms)\n✖ bad one (5.386538ms)\n  AssertionError [ERR_ASSERTION]: 1 !== 2\n"
CARGO = """running 2 tests
test tests::empty ... ok
test tests::scales ... FAILED

failures:

---- tests::scales stdout ----

thread 'tests::scales' panicked at src/lib.rs:12:9:
assertion `left == right` failed
  left: [3, 5]
 right: [2, 4]

failures:
    tests::scales

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""
UNITTEST = """F.
======================================================================
FAIL: test_mean (test_calc.T.test_mean)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/repo/test_calc.py", line 7, in test_mean
    self.assertEqual(mean([1, 2, 3]), 2)
AssertionError: 3.0 != 2

----------------------------------------------------------------------
Ran 2 tests in 0.000s

FAILED (failures=1)
"""


def test_pytest_names_the_failing_test_with_its_failure_text():
    r = parse_results(PYTEST)
    assert r.runner == "pytest" and [f.name for f in r.failed] == ["test_calc.py::test_scale"]
    assert r.failed[0].text.startswith("assert [3, 5] == [2, 4]") and "test_calc.py:5" in r.failed[0].text
    passing = parse_results("....                                                [100%]\n4 passed in 0.01s\n")
    assert passing.runner == "pytest" and passing.failed == []


def test_node_tap_and_spec_reporters():
    tap = parse_results(TAP)
    assert (
        tap.runner == "node"
        and [f.name for f in tap.failed] == ["bad one"]
        and "1 !== 2" in tap.failed[0].text
    )
    spec = parse_results(SPEC)
    assert spec.runner == "node" and [f.name for f in spec.failed] == ["bad one"]


def test_cargo_test_names_and_panic_text():
    r = parse_results(CARGO)
    assert r.runner == "cargo" and [f.name for f in r.failed] == ["tests::scales"]
    assert "left: [3, 5]" in r.failed[0].text and "tests::empty" not in r.failed[0].text


def test_unittest_and_an_unknown_runner():
    r = parse_results(UNITTEST)
    assert r.runner == "unittest" and [f.name for f in r.failed] == ["test_calc.T.test_mean"]
    assert "3.0 != 2" in r.failed[0].text
    unknown = parse_results("make: *** [test] Error 1\nFAILED (errors=1)\n")
    assert unknown.runner is None and unknown.failed == []
