"""Prompt templates: strict variables, LiveCodeBench's exact prompt, and the parsers of agents' answers."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest
from strategy_helpers import add_problem

from memdoor.core.problem import Problem, TestCase
from memdoor.core.verdict import TestResult, Verdict
from memdoor.prompts import PromptTemplateError, render
from memdoor.strategies import messages


def official_prompt_functions() -> dict:
    """LiveCodeBench's PromptConstants and generic chat template, taken from the installed package's
    source (importing the module would need its ``datasets`` dependency, which is not installed)."""
    spec = importlib.util.find_spec("livecodebench")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("nvidia-livecodebench is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "prompts" / "code_generation.py"
    tree = ast.parse(path.read_text())
    wanted = {"PromptConstants", "get_generic_question_template_answer"}
    module = ast.Module(body=[n for n in tree.body if getattr(n, "name", None) in wanted], type_ignores=[])
    scope: dict = {}
    exec(compile(module, str(path), "exec"), scope)
    assert wanted <= set(scope)
    return scope


def test_render_is_strict_both_ways():
    with pytest.raises(PromptTemplateError, match="missing"):
        render("question_stdin")
    with pytest.raises(PromptTemplateError, match="unexpected"):
        render("question_stdin", statement="x", extra="y")
    # values are inserted as is, even when they look like template variables
    assert "$starter and ${x}" in render("question_stdin", statement="$starter and ${x}")


@pytest.mark.parametrize("starter", ["class Solution:\n    def f(self, x: int) -> int:\n        ", ""])
def test_first_draft_is_livecodebench_generic_chat_prompt(starter):
    official = official_prompt_functions()
    statement = "Given x, return x.\n\nExample 1:\nInput: x = 1\nOutput: 1 $HOME {x}"
    problem = Problem(id="p", statement=statement, starter_code=starter, func_name="f" if starter else None)
    msgs = messages.draft(problem, variant=0)
    expected_user = official["get_generic_question_template_answer"](
        SimpleNamespace(question_content=statement, starter_code=starter)
    )
    assert msgs == [
        {"role": "system", "content": official["PromptConstants"].SYSTEM_MESSAGE_GENERIC},
        {"role": "user", "content": expected_user},
    ]


def test_prompt_variants_add_a_hint_and_keep_the_format():
    problem = add_problem()
    base = messages.draft(problem, 0)[1]["content"]
    v1, v2 = messages.draft(problem, 1)[1]["content"], messages.draft(problem, 2)[1]["content"]
    assert len({base, v1, v2}) == 3
    for v in (v1, v2):
        assert v.startswith(messages.question(problem)) and v.endswith(render("answer"))


def test_seven_variants_differ_and_the_first_five_keep_their_hints():
    problem = add_problem()
    users = [messages.draft(problem, v)[1]["content"] for v in range(9)]
    assert len(set(users[:8])) == 8, "the official prompt and seven distinct hints"
    assert users[8] == users[1], "variants cycle after the last hint"
    assert "edge cases" in users[1] and "output format" in users[4]  # variants 1-4 as before
    assert (
        "algorithm in two or three sentences" in users[5]
        and "by hand" in users[6]
        and "brute force" in users[7]
    )


def test_humaneval_asks_for_the_complete_function():
    prompt = 'def inc(x: int) -> int:\n    """Return x + 1.\n    >>> inc(1)\n    2\n    """\n'
    problem = Problem(
        id="HumanEval/x",
        statement=prompt,
        starter_code=prompt,
        func_name="inc",
        platform="humaneval",
        public_tests=[TestCase(kind="functional", input="1", output="2")],
    )
    user = messages.draft(problem)[1]["content"]
    assert "Complete the following Python function." in user and prompt.rstrip() in user
    assert "`inc`" in user and user.endswith("### Answer: (use the provided format with backticks)\n\n")


def test_results_show_failing_public_tests_only_and_cap_them():
    problem = add_problem()
    verdict = Verdict(
        status="wrong_answer",
        tests=[TestResult(status="passed", output="3"), TestResult(status="wrong_answer", output="0" * 5000)],
    )
    text = messages.results(problem.public_tests, verdict, code="x")
    assert text.startswith("1 of 2 public tests pass.")
    assert "Test 2: wrong_answer" in text and "Test 1" not in text
    assert "Expected output:\n4" in text and "more characters" in text and len(text) < 2000
    assert "No code was found" in messages.results(problem.public_tests, verdict, code="  ")


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("- off by one\nVERDICT: ISSUES", False),
        ("Looks right.\nVERDICT: OK", True),
        ("**VERDICT: OK**", True),
        ("I first thought VERDICT: ISSUES but no.\nverdict: ok", True),
        ("VERDICT: OK? no wait\nVERDICT: ISSUES", False),
        ("no verdict line at all", None),
    ],
)
def test_parse_review(text, ok):
    assert messages.parse_review(text) is ok


def test_parse_inputs_functional_keeps_valid_json_lines_only():
    problem = add_problem()
    text = (
        "```input\n1\n2\n```\n```input\n[1, 2\n3\n```\n```input\n 7\n\n-1 \n```\n"
        "```input\n1\n2\n```\n```input\n5\n6\n```\n```python\nprint(1)\n```"
    )
    tests = messages.parse_inputs(text, problem, limit=2)
    assert [t.input for t in tests] == ["1\n2", "7\n-1"]
    assert all(t.kind == "functional" and t.output is None for t in tests)


def test_parse_inputs_stdin_and_humaneval_kinds():
    stdin = Problem(id="s", statement="x", public_tests=[TestCase(kind="stdin", input="1\n", output="1")])
    tests = messages.parse_inputs("```input\n3\n1 2 3\n```", stdin, limit=5)
    assert [(t.kind, t.input) for t in tests] == [("stdin", "3\n1 2 3\n")]
    check = Problem(id="h", statement="x", func_name="f", hidden_tests=[TestCase(kind="check", input="")])
    assert messages.inputs_kind(check) == "functional" == messages.inputs_kind(check.public_view())


def test_parse_inputs_reads_calls_written_as_code():
    """What small models write when asked for inputs: calls in a Python block, printed or asserted, with
    arguments bound to names first; calls with other arguments and repeats are left out."""
    problem = add_problem()
    text = (
        "```python\n# Test case 1\na = [1, 2]\nprint(add(1, 2))  # 3\nassert add(a, 3) == 4, 'x'\n"
        "add(y, 1)\nadd(1, b=2)\nadd(1, 2)\nadd(...)\n```"
    )
    assert [t.input for t in messages.parse_inputs(text, problem, limit=5)] == ["1\n2", "[1, 2]\n3"]
    both = "```input\n5\n6\n```\n```python\nadd(1, 2)\n```"  # input blocks, when written, are the answer
    assert [t.input for t in messages.parse_inputs(both, problem, limit=5)] == ["5\n6"]


def test_parse_inputs_reads_javascript_calls():
    """What the 0.5B writes for a JavaScript problem: console.log calls with ``//`` comments and ``;``,
    arguments bound with ``const`` first. Read as Python they did not parse, so no input was used."""
    problem = add_problem().model_copy(update={"language": "javascript"})
    text = (
        "```javascript\n// Test case 1: two numbers\nconsole.log(add([1.0, 2.8], 0.5)); // true\n"
        "const xs = ['a//b', \"c\"];\nconsole.log(add(xs, null));\nconsole.log(add(ys, 1));\n"
        "console.log(add(true, -2)) // false\n```"
    )
    assert [t.input for t in messages.parse_inputs(text, problem, limit=5)] == [
        "[1.0, 2.8]\n0.5",
        '["a//b", "c"]\nnull',
        "true\n-2",
    ]
    python = add_problem()  # read as Python, only the line whose "// false" is a floor division parses
    assert [t.input for t in messages.parse_inputs(text, python, limit=5)] == ["true\n-2"]


def test_function_inputs_are_asked_as_calls_without_the_answer_format():
    user = messages.inputs(add_problem().public_view(), 3)[-1]["content"]
    assert "Write 3 new" in user and "write only calls of `add`" in user and "```python\nadd(...)" in user
    assert "### Format" not in user and "### Question" in user
