"""Seed tasks → problems: the function named in a prompt, the tests a client may send, bad tasks."""

from __future__ import annotations

import json

import pytest

from memdoor.core.errors import ProblemFormatError
from memdoor.distributed.seedtask import find_function, parse_task, task_problem

KEY = "task:t1"


@pytest.mark.parametrize(
    ("prompt", "name", "starter"),
    [
        (
            "Write a Python function `is_palindrome(s: str) -> bool` that returns True for palindromes.",
            "is_palindrome",
            "def is_palindrome(s: str) -> bool:\n    ",
        ),
        ("Implement `def add(a, b)` returning the sum.", "add", "def add(a, b):\n    "),
        ("Write def count_vowels(text) that counts vowels.", "count_vowels", ""),
        ("Write a function named merge_intervals that merges intervals.", "merge_intervals", ""),
        ("Call `print(x)` then write `solve(n: int) -> int`.", "solve", "def solve(n: int) -> int:\n    "),
        ("Read two integers from standard input and print their sum.", None, ""),
    ],
)
def test_the_function_a_prompt_asks_for(prompt, name, starter):
    assert find_function(prompt) == (name, starter)


def test_a_signature_that_does_not_parse_gives_no_starter():
    assert find_function("Write `f(x: = 3)` please") == ("f", "")


def test_parse_task_checks_json_fields_and_id():
    ok = parse_task("t1", json.dumps({"id": "t1", "prompt": "p", "agents": 3, "extra": 1}), key=KEY)
    assert ok.id == "t1" and ok.agents == 3
    assert parse_task("7", json.dumps({"id": 7, "prompt": "p"}), key="task:7").id == "7"
    cases = [
        (b"\xff\xfe", None),
        ("[]", None),
        (json.dumps({"prompt": "p"}), "id"),
        (json.dumps({"id": "t1", "prompt": 5}), "prompt"),
        (json.dumps({"id": "t1", "prompt": "p", "agents": 0}), "agents"),
        (json.dumps({"id": "t2", "prompt": "p"}), "id"),
    ]
    for raw, field in cases:
        with pytest.raises(ProblemFormatError) as e:
            parse_task("t1", raw, key=KEY)
        assert e.value.path == KEY and e.value.field == field


def test_function_tests_become_functional_cases():
    task = parse_task(
        "t1",
        json.dumps(
            {
                "id": "t1",
                "prompt": "Write `pair(a: int, b: list) -> list`.",
                "tests": [{"input": [1, [2, "é"]], "output": [1, 2]}, {"input": "3\n[4]"}],
            }
        ),
        key=KEY,
    )
    p = task_problem(task, key=KEY)
    assert p.func_name == "pair" and p.kind == "functional" and p.prelude == "livecodebench"
    assert p.public_tests[0].input == '1\n[2, "é"]' and p.public_tests[0].output == "[1, 2]"
    assert p.public_tests[1].input == "3\n[4]" and p.public_tests[1].output is None
    assert p.statement == task.prompt and not p.hidden_tests


def test_program_tests_are_stdin_text():
    task = parse_task(
        "t1",
        json.dumps(
            {"id": "t1", "prompt": "Read n, print n+1.", "tests": [{"input": "1\n", "output": "2\n"}]}
        ),
        key=KEY,
    )
    p = task_problem(task, key=KEY)
    assert p.func_name is None and p.kind == "stdin" and p.public_tests[0].output == "2\n"


@pytest.mark.parametrize(
    ("prompt", "tests", "field"),
    [
        ("Write `f(x)`.", [{"input": 5}], "tests.0.input"),
        ("Write `f(x)`.", [{"input": "not json"}], "tests.0.input"),
        ("Read stdin.", [{"input": ["a"]}], "tests.0.input"),
        ("Read stdin.", [{"input": "1", "output": 2}], "tests.0.output"),
        ("Read stdin.", "assert f(1) == 2", "tests"),
        ("Write `f(x)`.", "assert f(1) ==", "tests"),
    ],
)
def test_unusable_tests_name_the_field(prompt, tests, field):
    task = parse_task("t1", json.dumps({"id": "t1", "prompt": prompt, "tests": tests}), key=KEY)
    with pytest.raises(ProblemFormatError) as e:
        task_problem(task, key=KEY)
    assert e.value.field == field


def test_assert_tests_run_in_the_real_sandbox(sandbox):
    task = parse_task(
        "t1",
        json.dumps(
            {
                "id": "t1",
                "prompt": "Write `double(x: int) -> int`.",
                "tests": "assert double(2) == 4\nassert double(-1) == -2",
            }
        ),
        key=KEY,
    )
    p = task_problem(task, key=KEY)
    assert p.public_tests[0].kind == "check"

    def run(code: str):
        return sandbox.run(code, p.public_tests, func_name=p.func_name, prelude=p.prelude)

    assert run("def double(x):\n    return 2 * x\n").passed
    assert not run("def double(x):\n    return x + 2\n").passed


def test_prose_words_are_not_function_names():
    assert find_function("Write a function that checks whether a string is a palindrome.")[0] != "that"
    assert (
        find_function("Write a Python function `is_palindrome(s: str) -> bool` please")[0] == "is_palindrome"
    )
