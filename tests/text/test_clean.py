"""Demo lines around a function answer go; definitions, and anything they may depend on, stay."""

from __future__ import annotations

import gzip
import json

import pytest

from memdoor.problems.doctests import docstring_examples
from memdoor.problems.humaneval import data_path
from memdoor.text.clean import drop_demo_lines

ENCODE = """\
def encode(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(s[i] + (str(j - i) if j - i > 1 else ""))
        i = j
    return "".join(out)"""


def test_the_issue_example_prints_and_output_comments_go():
    answer = (
        ENCODE
        + """

# Example usage:
print(encode("ababab"))   # Output: "a3b2ab"
print(encode("aaabbc"))   # Output: "a3b2c"
# Output: a3b2c
"""
    )
    assert drop_demo_lines(answer, "encode") == ENCODE + "\n"


def test_main_guard_results_asserts_and_test_loops_go():
    answer = '''\
from collections import Counter

MOD = 10**9 + 7


def count_pairs(nums: list[int]) -> int:
    """Pairs of equal values."""
    result = 0
    for v in Counter(nums).values():
        result += v * (v - 1) // 2
    return result % MOD


# Test cases
test_cases = [([1, 1, 2], 1), ([1, 1, 1], 3)]
for nums, expected in test_cases:
    result = count_pairs(nums)
    print(f"count_pairs({nums}) = {result}, expected {expected}")
    assert result == expected, "wrong"

assert count_pairs([]) == 1  # the model's own example is wrong: it would fail the import

if __name__ == "__main__":
    n = int(input())
    print(count_pairs(list(map(int, input().split()))))
'''
    assert drop_demo_lines(answer, "count_pairs") == answer.split("# Test cases")[0].rstrip() + "\n"


def test_a_leetcode_class_with_an_instance_demo():
    code = "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]"
    answer = code + "\n\n# Test\nsol = Solution()\nprint(sol.twoSum([2, 7, 11, 15], 9))  # [0, 1]\n"
    assert drop_demo_lines(answer, "twoSum") == code + "\n"
    fresh = code + "\n\nprint(Solution().twoSum([3, 3], 6))\nSolution().twoSum([1], 1)\n"
    assert drop_demo_lines(fresh, "twoSum") == code + "\n"


def test_a_bare_call_of_a_test_function_goes_but_the_function_stays():
    code = "def g(x):\n    return x + 1\n\n\ndef test_g():\n    assert g(1) == 3"
    assert drop_demo_lines(code + "\n\n\ntest_g()\n", "g") == code + "\n"


@pytest.mark.parametrize(
    "answer",
    [
        # state the definitions use: a helper that fills a module-level table, a recursion limit
        "PRIMES = []\n\ndef build():\n    for i in range(2, 100):\n        PRIMES.append(i)\n\nbuild()\n\n"
        "def count(n):\n    return sum(p <= n for p in PRIMES)\n",
        "import sys\nsys.setrecursionlimit(10**6)\n\ndef count(n):\n    return 0 if n == 0 else 1 + count(n - 1)\n",
        # module-level constants, also one that no function reads
        "LIMIT = 10\nUNUSED = [1, 2]\n\ndef count(n):\n    return min(n, LIMIT)\n",
        # a demo value a function reads is not a demo value
        "data = [3, 1, 2]\n\ndef count(n):\n    return n + len(data)\n",
        # globals read dynamically: nothing can be judged unused
        "def count(n):\n    return globals()['x']\n\nx = count\nprint(count(1))\n",
        # statements sharing a line with a kept one
        "def count(n): return n\nprint(count(1)); y = 2\n",
        # not Python
        "def count(n):\n    return n +\nprint(count(1))\n",
        # nothing but demo lines (no definition): kept whole, the author sees what ran
        "print(count(3))\n",
        # an expression nested too deeply to analyse
        "def count():\n    return " + "+".join(["1"] * 1200) + "\nprint(count())\n",
        # print rebound by the answer
        "def print(*a):\n    pass\n\ndef count(n):\n    return n\n",
    ],
)
def test_what_the_definitions_may_depend_on_stays(answer):
    assert drop_demo_lines(answer, "count") == answer


def test_a_call_with_unknown_effects_stays():
    answer = "import random\n\ndef count(n):\n    return n\n\nrandom.seed(count(1))\nprint(count(2))\n"
    assert drop_demo_lines(answer, "count") == answer.replace("print(count(2))\n", "").rstrip() + "\n"


def test_a_demo_loop_that_mutates_kept_data_stays():
    answer = "data = [3, 1]\n\ndef count(n):\n    return data[n]\n\nfor _ in range(1):\n    data.append(count(0))\n"
    assert drop_demo_lines(answer, "count") == answer


def test_a_comment_heading_the_next_definition_stays():
    answer = "def a():\n    return 1\n\nprint(a())\n# the helper\ndef b():\n    return a()\n"
    assert (
        drop_demo_lines(answer, "a") == "def a():\n    return 1\n\n# the helper\ndef b():\n    return a()\n"
    )


def test_nothing_to_drop_returns_the_code_unchanged():
    assert drop_demo_lines(ENCODE, "encode") is ENCODE


def _demo(func_name: str, tests) -> str:
    """Demo lines a model might add: the examples printed, then asserted, under a comment."""
    lines = ["", "", "# Example usage:"]
    for t in tests:
        args = ", ".join(repr(json.loads(line)) for line in t.input.split("\n"))
        want = repr(json.loads(t.output))
        lines += [f"print({func_name}({args}))  # Output: {want}", f"assert {func_name}({args}) == {want}"]
    return "\n".join(lines) + "\n"


def test_humaneval_solutions_are_untouched_and_their_demos_go():
    """Every official HumanEval solution (prompt + canonical completion) is left as it is; with its
    docstring examples printed and asserted after it, exactly those lines go."""
    with gzip.open(data_path(), "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    with_demo = 0
    for r in records:
        code = r["prompt"] + r["canonical_solution"]
        assert drop_demo_lines(code, r["entry_point"]) == code, r["task_id"]
        tests = docstring_examples(r["prompt"], r["entry_point"])
        if tests:
            demo = code.rstrip() + _demo(r["entry_point"], tests)
            assert drop_demo_lines(demo, r["entry_point"]) == code.rstrip() + "\n", r["task_id"]
            with_demo += 1
    assert with_demo > 100


def test_leetcode_reference_solutions_are_untouched(shared_data):
    rows = [json.loads(line) for line in (shared_data / "reference_solutions_dev.jsonl").open()]
    assert len(rows) > 100
    for r in rows:
        assert drop_demo_lines(r["reference_solution"], r["func_name"]) == r["reference_solution"]
