"""Strategies in JavaScript and Rust (issue 14): the prompts ask for the problem's language, answers in
```javascript / ```rust fences are extracted, drafts run on the public tests and the answer is graded on the
hidden ones, all in the real sandbox (scripted agents drive the control flow only)."""

from __future__ import annotations

import pytest
from strategy_helpers import make_ctx, scripted, team_of

from memdoor.core.problem import Problem, TestCase
from memdoor.judging.programs import grade
from memdoor.problems.load import load_problems
from memdoor.sandbox.lang.run import tool_for
from memdoor.strategies import messages
from memdoor.strategies.parallel import Parallel
from memdoor.strategies.single import Single

pytestmark = pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)

JS_GOOD = """const hasCloseElements = (numbers, threshold) => {
  for (let i = 0; i < numbers.length; i++)
    for (let j = i + 1; j < numbers.length; j++)
      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;
  return false;
}"""
JS_BAD = "const hasCloseElements = (numbers, threshold) => {\n  return false;\n}"
RS_GOOD = """fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool {
    for i in 0..numbers.len() {
        for j in (i + 1)..numbers.len() {
            if (numbers[i] - numbers[j]).abs() < threshold { return true; }
        }
    }
    false
}"""


def fenced(language: str, code: str) -> str:
    return f"Here it is.\n```{language}\n{code}\n```\n"


def test_prompts_ask_for_the_problems_language():
    js, rust = load_problems("humaneval-js")[0], load_problems("humaneval-rust")[0]
    for problem, name, fence in ((js, "JavaScript", "```javascript"), (rust, "Rust", "```rust")):
        system, user = messages.draft(problem)
        assert name in system["content"] and "Python" not in system["content"]
        assert fence in user["content"] and "```python" not in user["content"]
        assert f"Complete the following {name} function" in user["content"]
    for problem, fence in ((js, "```javascript"), (rust, "```rust")):
        # no empty block to fill: the 1.5B model copied "// YOUR CODE HERE" back as its whole answer
        user = messages.draft(problem)[1]["content"]
        assert "YOUR CODE HERE" not in user and f"enclose it in one {fence} code block" in user
    assert "has_close_elements" in messages.draft(rust)[1]["content"]
    assert "Check if in given list" in messages.draft(rust)[1]["content"]  # the docstring is shown
    python = load_problems("humaneval")[0]
    assert "```python" in messages.draft(python)[1]["content"]
    stdin = Problem(
        id="s",
        statement="Print the Python version of 1 + 1.",
        public_tests=[TestCase(kind="stdin", input="\n", output="2")],
    )
    user = messages.draft(stdin.model_copy(update={"language": "rust"}))[1]["content"]
    assert "```rust" in user and "Print the Python version" in user  # the problem's own words stay
    assert "YOUR CODE HERE" not in user and "Enclose your code in one ```rust code block." in user
    assert "# YOUR CODE HERE" in messages.draft(stdin)[1]["content"]  # Python keeps LiveCodeBench's prompt


async def test_single_in_rust(sandbox):
    problem = load_problems("humaneval-rust")[0]
    agent = scripted({"draft": [fenced("rust", RS_GOOD)]})
    sol = await Single().solve(problem.public_view(), team_of(agent), make_ctx(sandbox))
    assert sol.code == RS_GOOD
    assert grade(problem, sol.code, sandbox).passed
    bad = RS_GOOD.replace("< threshold", "> threshold")
    assert grade(problem, bad, sandbox).status == "wrong_answer"
    assert grade(problem, JS_BAD, sandbox).status == "compile_error"  # JavaScript is not Rust


async def test_parallel_in_javascript_picks_a_draft_that_passes_the_examples(sandbox):
    problem = load_problems("humaneval-js")[0]
    agents = [
        scripted({"draft": [fenced("javascript", JS_BAD)]}, spec="scripted:a"),
        scripted({"draft": [fenced("javascript", JS_GOOD)]}, spec="scripted:b"),
        scripted({"draft": [fenced("javascript", JS_GOOD)]}, spec="scripted:c"),
    ]
    sol = await Parallel().solve(problem.public_view(), team_of(*agents), make_ctx(sandbox))
    assert sol.code == JS_GOOD
    assert sol.public_verdict is not None and sol.public_verdict.passed  # the example_test, in node
    assert grade(problem, sol.code, sandbox).passed
    assert not grade(problem, JS_BAD, sandbox).passed


def test_rust_compiler_errors_reach_the_repair_prompt(sandbox):
    problem = load_problems("humaneval-rust")[0]
    broken = RS_GOOD.replace("false\n}", "flase\n}")
    verdict = grade(problem, broken, sandbox, hidden=False)  # the public test: it must compile
    assert verdict.status == "compile_error" and "flase" in verdict.tests[0].detail
    text = messages.results(problem.public_tests, verdict, code=broken)
    assert "compile_error" in text and "flase" in text
    assert "flase" in messages.repair(problem, broken, text)[1]["content"]  # what the repairing agent reads
    assert grade(problem, RS_GOOD, sandbox, hidden=False).passed
