"""Verdicts of the real sandbox for each test kind, LiveCodeBench's prelude, and stopping at the first failure."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest
from lcb_cases import FUNCTIONAL, NUMPY
from sandbox_helpers import fn_tests, numpy_in_sandbox, stdin_tests

from memdoor.core import registry
from memdoor.core.errors import SandboxError
from memdoor.core.problem import TestCase
from memdoor.sandbox import SandboxConfig, open_sandbox

ADD_CLASS = """
class Solution:
    def add(self, a: int, b: int) -> int:
        return a + b
"""

ADD_FUNC = "def add(a, b):\n    return a + b\n"


def test_functional_class_solution_passes(sandbox):
    v = sandbox.run(
        ADD_CLASS, fn_tests(("1\n2", "3"), ("-5\n5", "0")), func_name="add", prelude="livecodebench"
    )
    assert v.status == "passed", v
    assert [t.status for t in v.tests] == ["passed", "passed"]
    assert v.passed and v.tests_passed == 2 and v.tests_total == 2
    assert v.isolation == sandbox.name and sandbox.name in ("bwrap", "unshare")


def test_functional_module_level_function(sandbox):
    v = sandbox.run(ADD_FUNC, fn_tests(("1\n2", "3")), func_name="add", prelude="none")
    assert v.status == "passed", v


def test_wrong_answer_stops_at_first_failure(sandbox):
    code = "def add(a, b):\n    return a + b if a != 2 else 0\n"
    tests = fn_tests(("1\n1", "2"), ("2\n2", "4"), ("3\n3", "6"))
    v = sandbox.run(code, tests, func_name="add")
    assert v.status == "wrong_answer"
    assert [t.status for t in v.tests] == ["passed", "wrong_answer", "skipped"]
    assert v.failing() == [1]


def test_run_all_tests_when_asked(sandbox):
    code = "def add(a, b):\n    return a + b if a != 2 else 0\n"
    tests = fn_tests(("1\n1", "2"), ("2\n2", "4"), ("3\n3", "6"))
    v = sandbox.run(code, tests, func_name="add", stop_at_first_failure=False)
    assert v.status == "wrong_answer"
    assert [t.status for t in v.tests] == ["passed", "wrong_answer", "passed"]


@pytest.mark.parametrize(("code", "expected", "passes"), FUNCTIONAL)
def test_return_value_equality_rules(sandbox, code, expected, passes):
    # LiveCodeBench: a tuple result becomes a list (top level only), then plain == (3.0 == 3, True == 1).
    v = sandbox.run(code, fn_tests(("0", expected)), func_name="f", prelude="livecodebench")
    assert v.passed is passes, (v.tests[0].status, v.tests[0].output, v.tests[0].detail)


@pytest.mark.parametrize(("code", "expected", "passes"), NUMPY)
def test_numpy_results_compare_as_officially(sandbox, code, expected, passes):
    if not numpy_in_sandbox(sandbox):
        pytest.skip("numpy is not installed for the sandbox interpreter (python3-numpy)")
    v = sandbox.run(code, fn_tests(("0", expected)), func_name="f", prelude="livecodebench")
    assert v.passed is passes, (v.tests[0].status, v.tests[0].output, v.tests[0].detail)


def test_functional_arguments_are_json_lines(sandbox):
    code = "def f(xs, s, d):\n    return [sum(xs), s.upper(), sorted(d)]\n"
    v = sandbox.run(
        code, fn_tests(('[1, 2, 3]\n"ab"\n{"k": 1, "j": 2}', '[6, "AB", ["j", "k"]]')), func_name="f"
    )
    assert v.passed, v


def test_recorded_output_when_no_expected_output(sandbox):
    code = "def f(x):\n    return (x, [x * 2])\n"
    v = sandbox.run(code, fn_tests(("3", None), ("4", None)), func_name="f")
    assert v.passed
    assert [json.loads(t.output) for t in v.tests] == [[3, [6]], [4, [8]]]
    v = sandbox.run("print(input()[::-1])", stdin_tests(("abc\n", None)), prelude="livecodebench")
    assert v.passed and v.tests[0].output.strip() == "cba"


def test_long_outputs_are_kept_short_but_distinct(sandbox):
    tests = stdin_tests(("a\n", None))
    one = sandbox.run("print('x' * 100000 + 'a')", tests)
    two = sandbox.run("print('x' * 100000 + 'b')", tests)
    assert one.passed and two.passed
    assert len(one.tests[0].output) < 20000
    assert one.tests[0].output != two.tests[0].output


def test_runtime_error_names_the_exception(sandbox):
    code = "def f(x):\n    return [][x]\n"
    v = sandbox.run(code, fn_tests(("5", "0")), func_name="f")
    assert v.status == "runtime_error"
    assert "IndexError" in v.tests[0].detail


def test_syntax_error_is_a_compile_error(sandbox):
    v = sandbox.run("def f(:\n    pass\n", fn_tests(("1", "1"), ("2", "2")), func_name="f")
    assert v.status == "compile_error"
    assert v.tests[0].status == "compile_error"
    assert not v.passed


def test_missing_function_fails(sandbox):
    v = sandbox.run("def g(x):\n    return x\n", fn_tests(("1", "1")), func_name="f")
    assert not v.passed and v.status != "skipped"


def test_livecodebench_prelude_names_and_limits(sandbox):
    # No imports: List, Counter, lru_cache, heappush, inf come from the prelude; recursion limit 50000
    # (10000 levels through lru_cache: the official grader itself crashes at 20000 with an 8 MiB stack).
    code = """
class Solution:
    def go(self, nums: List[int]) -> int:
        @lru_cache(None)
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        h = []
        for x in nums:
            heappush(h, x)
        return depth(10000) + Counter(nums).most_common(1)[0][1] + h[0] + (0 if inf > 0 else 1)
"""
    v = sandbox.run(
        code, fn_tests(("[3, 1, 3]", str(10000 + 2 + 1))), func_name="go", prelude="livecodebench"
    )
    assert v.passed, v
    bare = sandbox.run(code, fn_tests(("[3, 1, 3]", "10003")), func_name="go", prelude="none")
    assert not bare.passed  # List is undefined without the prelude


def test_big_integers_print_under_the_livecodebench_digit_limit(sandbox):
    # 5001 digits: more than Python's default limit (4300), within LiveCodeBench's 50000.
    v = sandbox.run("print(10 ** 5000)", stdin_tests(("\n", "1" + "0" * 5000)), prelude="livecodebench")
    assert v.passed, v.tests[0].detail


def test_stdin_program(sandbox):
    code = "a, b = map(int, input().split())\nprint(a + b)\n"
    tests = stdin_tests(("1 2\n", "3\n"), ("10 -4\n", "6\n"), ("5 5\n", "11\n"))
    v = sandbox.run(code, tests, prelude="livecodebench")
    assert [t.status for t in v.tests] == ["passed", "passed", "wrong_answer"]
    assert v.status == "wrong_answer"


def test_check_tests_humaneval_style(sandbox):
    code = "def add(a, b):\n    return a + b\n"
    good = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 0) == 0\n"
    bad = "def check(candidate):\n    assert candidate(1, 2) == 4\n"
    v = sandbox.run(code, [TestCase(kind="check", input=good)], func_name="add")
    assert v.passed, v
    v = sandbox.run(code, [TestCase(kind="check", input=bad)], func_name="add")
    assert not v.passed and v.status in ("wrong_answer", "runtime_error")


def test_prints_in_functional_code_do_not_matter(sandbox):
    code = "print('debug')\ndef f(x):\n    print('more debug', x)\n    return x + 1\n"
    v = sandbox.run(code, fn_tests(("1", "2")), func_name="f")
    assert v.passed, v


def test_many_threads_share_one_sandbox(sandbox):
    ok = "def f(x):\n    return x * 2\n"
    wrong = "def f(x):\n    return x * 3\n"
    crash = "def f(x):\n    raise ValueError(x)\n"
    jobs = [(ok, "passed"), (wrong, "wrong_answer"), (crash, "runtime_error")] * 6

    def one(job):
        code, _ = job
        return sandbox.run(code, fn_tests(("2", "4"), ("5", "10")), func_name="f").status

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(one, jobs))
    assert got == [want for _, want in jobs]


def test_open_sandbox_reports_its_isolation_and_refuses_a_broken_setup():
    with open_sandbox(SandboxConfig(isolation="auto")) as sb:
        if shutil.which("bwrap"):
            assert sb.name == "bwrap"
    with open_sandbox(SandboxConfig(isolation="unshare")) as sb:
        assert sb.name == "unshare"
    with pytest.raises(SandboxError):
        open_sandbox(SandboxConfig(python="/nonexistent/python3"))
    assert registry.load("sandbox", "bwrap").name == "bwrap"
    assert registry.load("sandbox", "unshare").name == "unshare"


def test_plain_stdin_semantics_without_the_prelude(sandbox):
    # Users' own stdin problems (prelude "none"): the program runs as __main__, globals work as usual.
    code = "x = 0\ndef bump():\n    global x\n    x += int(input())\nif __name__ == '__main__':\n    bump()\n    print(x)\n"
    v = sandbox.run(code, stdin_tests(("3\n", "3\n"), ("4\n", "4\n")), prelude="none")
    assert v.passed, v
