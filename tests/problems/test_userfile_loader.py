import pytest

from memdoor.core.errors import ProblemFormatError
from memdoor.problems.load import load_problems

GOOD = """
problems:
  - id: add
    statement: Read two integers and print their sum.
    tests:
      - {input: "1 2\\n", output: "3\\n"}
    hidden_tests:
      - {input: "5 5\\n", output: "10\\n"}
  - id: mul
    statement: Return a*b.
    function: mul
    tests:
      - {args: [2, 3], expected: 6}
"""


def test_yaml_with_stdin_and_function_problems(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(GOOD)
    add, mul = load_problems(path)
    assert add.kind == "stdin" and add.hidden_tests[0].output == "10\n"
    assert mul.kind == "functional" and mul.func_name == "mul" and mul.public_tests[0].input == "2\n3"


def test_folder_and_json(tmp_path):
    (tmp_path / "a.json").write_text('{"id": "x", "statement": "s", "tests": [{"input": "", "output": "1"}]}')
    (tmp_path / "b.yaml").write_text("id: y\nstatement: t\nhidden_tests: [{input: '', output: '2'}]\n")
    assert [p.id for p in load_problems(tmp_path)] == ["x", "y"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("id: a\n", "field 'statement': missing"),
        ("id: a\nstatement: s\nfunction: f\ntests: [{input: '1', output: '2'}]\n", "needs 'args'"),
        ("id: a\nstatement: s\ntests: [{args: [1]}]\n", "needs 'input' and 'output'"),
        ("id: a\nstatement: s\nsurprise: 1\n", "field 'surprise': unknown field"),
        ("id: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_user_files(tmp_path, text, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ProblemFormatError) as e:
        load_problems(path)
    assert needle in str(e.value) and str(path) in str(e.value)


def test_repo_examples_load():
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples" / "problems.yaml"
    problems = load_problems(examples)
    assert len(problems) >= 3 and all(p.public_tests and p.hidden_tests for p in problems)
