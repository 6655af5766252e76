"""``--language``: standard-input problems answered in any language, with the same tests; other problems
keep their own language (a one-line usage error, exit 2)."""

from __future__ import annotations

import json

import pytest

from memdoor.cli import main
from memdoor.core.errors import UsageError
from memdoor.problems.languages import in_language
from memdoor.problems.load import load_problems
from memdoor.sandbox.lang.run import tool_for

PROBLEMS = [
    {
        "id": "add-two",
        "statement": "Read two integers and print their sum.",
        "tests": [{"input": "1 2\n", "output": "3\n"}],
        "hidden_tests": [{"input": "10 -4\n", "output": "6\n"}, {"input": "20 22\n", "output": "42\n"}],
    }
]
RUST = (
    "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); "
    'let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!("{}", v[0] + v[1]); }'
)
JS = "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);"


def test_stdin_problems_take_any_language(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PROBLEMS))
    problems = load_problems(path)
    assert [p.language for p in in_language(problems, "rust")] == ["rust"]
    assert in_language(problems, "rust")[0].all_tests == problems[0].all_tests  # the same tests
    assert in_language(problems, None) == problems


def test_function_and_check_problems_keep_their_language():
    with pytest.raises(UsageError, match="only standard-input problems"):
        in_language(load_problems("humaneval"), "javascript")
    with pytest.raises(UsageError, match="JavaScript/0 is a javascript check problem"):
        in_language(load_problems("humaneval-js"), "python")
    assert in_language(load_problems("humaneval-js"), "javascript")[0].language == "javascript"


def test_grade_with_language_is_a_usage_error_for_humaneval(tmp_path, capsys):
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    return 1\n"}) + "\n")
    assert main(["grade", "humaneval", str(samples), "--language", "rust"]) == 2
    assert "only standard-input problems" in capsys.readouterr().err


@pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)
@pytest.mark.parametrize(("language", "good"), [("javascript", JS), ("rust", RUST)])
def test_grade_stdin_problems_in_another_language(tmp_path, capsys, language, good):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PROBLEMS))
    samples = tmp_path / "s.jsonl"
    bad = good.replace("a + b", "a - b").replace("v[0] + v[1]", "v[0] - v[1]")
    rows = [{"problem_id": "add-two", "reference_solution": code} for code in (good, bad)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["grade", str(path), str(samples), "--language", language, "--json", "--workers", "2"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["verdict"], r["tests_total"]) for r in out] == [("passed", 3), ("wrong_answer", 3)]


@pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")
def test_grade_humaneval_js_samples_and_its_excluded_problems(tmp_path, capsys):
    samples = tmp_path / "s.jsonl"
    rows = [
        {"task_id": "JavaScript/0", "completion": "  return numbers.some((x, i) => numbers.some((y, j) => "
         "i != j && Math.abs(x - y) < threshold));\n}\n"},
        {"task_id": "JavaScript/0", "completion": "  return true;\n}\n"},
        {"task_id": "JavaScript/112", "completion": "  return 1;\n}\n"},
    ]  # fmt: skip
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["grade", "humaneval-js", str(samples), "--workers", "2"]) == 0
    captured = capsys.readouterr()
    assert "JavaScript/112" in captured.err and "leaves out 3 known-bad problems" in captured.err
    lines = captured.out.splitlines()
    assert "passed" in lines[1] and "wrong_answer" in lines[2] and "excluded" in lines[3]
    assert "1/2 samples passed (1 on excluded known-bad problems, not graded)" in lines[-1]


JS_ANSWER = """const hasCloseElements = (numbers, threshold) => {
  return numbers.some((x, i) => numbers.some((y, j) => i != j && Math.abs(x - y) < threshold));
}"""
RS_ANSWER = """fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool {
    (0..numbers.len()).any(|i| (0..numbers.len()).any(|j| i != j && (numbers[i] - numbers[j]).abs() < threshold))
}"""


@pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)
@pytest.mark.parametrize(
    ("suite", "pid", "fence", "answer"),
    [
        ("humaneval-js", "JavaScript/0", "javascript", JS_ANSWER),
        ("humaneval-rust", "Rust/0", "rust", RS_ANSWER),
    ],
)
def test_solve_a_humaneval_x_problem_out_of_the_box(tmp_path, capsys, monkeypatch, suite, pid, fence, answer):
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path / "home"))
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([f"Here it is.\n```{fence}\n{answer}\n```\n"]))
    assert main(["solve", suite, "--problem", pid, "--model", f"scripted:{answers}", "--no-live"]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and f"```{fence}\n{answer}\n```" in out
