"""A team member's candidate: the official extraction, then demo lines dropped from a function answer
only — and the program graded is the program the user gets (real sandbox, scripted model)."""

from __future__ import annotations

from memdoor.core.problem import Problem, TestCase
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem
from memdoor.text.extract import candidate_code, extract_code

FUNCTION = "def add(a, b):\n    return a + b"
ANSWER = (
    "Here is the function:\n```python\n" + FUNCTION + "\n\n# Example usage\nprint(add(1, 2))  # Output: 3\n"
    "assert add(2, 2) == 5  # a wrong example: it would fail the import\n```\nIt adds the numbers."
)
PROGRAM = "def add(a, b):\n    return a + b\n\nprint(add(*map(int, input().split())))"


def functional() -> Problem:
    tc = lambda i, o: TestCase(kind="functional", input=i, output=o)  # noqa: E731
    return Problem(
        id="add",
        statement="Write add(a, b).",
        func_name="add",
        public_tests=[tc("1\n2", "3")],
        hidden_tests=[tc("0\n5", "5"), tc("-3\n1", "-2")],
    )


def stdin() -> Problem:
    tests = [TestCase(kind="stdin", input="1 2\n", output="3\n")]
    return Problem(id="add-stdin", statement="Read a and b, print a + b.", public_tests=tests)


def test_a_function_answer_loses_its_demo_lines_a_program_stays_whole():
    assert candidate_code(ANSWER, functional()) == FUNCTION
    check = Problem(
        id="c",
        statement="s",
        func_name="add",
        hidden_tests=[TestCase(kind="check", input="def check(f): pass")],
    )
    assert candidate_code(ANSWER, check) == FUNCTION
    program = f"```python\n{PROGRAM}\n```"
    assert candidate_code(program, stdin()) == PROGRAM == extract_code(program)
    assert candidate_code("no code here", functional()) == ""


def env_with(sandbox, tmp_path, model) -> RunEnv:
    pool = ModelPool()
    pool.add(model.spec, model)
    return RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path)


async def test_the_graded_program_is_the_cleaned_answer(sandbox, tmp_path):
    """Unclean, the wrong top-level assert would fail every test; the user gets and grading sees the
    function alone, which passes the hidden tests."""
    model = ScriptedModel([ANSWER], spec="scripted:a")
    env = env_with(sandbox, tmp_path, model)
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:a"])
    sol = await solve_problem(functional(), config, env)
    assert sol.error is None
    assert sol.code == FUNCTION
    assert sol.passed is True and sol.verdict.tests_total == 3
    drafts = await env.memory.entries(sol.trace_id, "drafts")
    assert [d["code"] for d in drafts] == [FUNCTION]


async def test_a_stdin_program_is_graded_whole(sandbox, tmp_path):
    model = ScriptedModel([f"```python\n{PROGRAM}\n```"], spec="scripted:a")
    env = env_with(sandbox, tmp_path, model)
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:a"])
    sol = await solve_problem(stdin(), config, env)
    assert sol.code == PROGRAM and sol.passed is True


JS_FUNCTION = """const hasCloseElements = (numbers, threshold) => {
  for (let i = 0; i < numbers.length; i++)
    for (let j = i + 1; j < numbers.length; j++)
      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;
  return false;
};"""
JS_ANSWER = (
    "```javascript\n" + JS_FUNCTION + "\n\n// Example usage:\n"
    "console.log(hasCloseElements([1.0, 2.0, 3.0], 0.5)); // Output: false\n```"
)


async def test_a_javascript_answer_is_graded_without_its_example_prints(sandbox, tmp_path):
    """HumanEval-X fails a program that prints anything: with its console.log line the right function
    fails; the user gets and grading sees the function alone, which passes."""
    from memdoor.problems.humaneval_x import load_humaneval_x

    problem = load_humaneval_x("javascript")[0]
    assert candidate_code(JS_ANSWER, problem) == JS_FUNCTION
    raw = problem.model_copy(update={"language": "rust"})  # a language without cleaning keeps the line
    assert "console.log" in candidate_code(JS_ANSWER, raw)
    model = ScriptedModel([JS_ANSWER], spec="scripted:a")
    env = env_with(sandbox, tmp_path, model)
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:a"])
    sol = await solve_problem(problem, config, env)
    assert sol.error is None and sol.code == JS_FUNCTION
    assert sol.passed is True
    printing = ScriptedModel(
        [
            JS_ANSWER.replace("// Example usage:\n", "// Example usage:\nlet shown = 0;\n").replace(
                "console.log(", "console.log(shown++, "
            )
        ],
        spec="scripted:b",
    )
    env = env_with(sandbox, tmp_path, printing)
    config = SolveConfig(strategy=StrategySpec.parse("single"), models=["scripted:b"])
    sol = await solve_problem(problem, config, env)
    assert "console.log" in sol.code and sol.passed is False  # a call that changes state is kept, and fails
