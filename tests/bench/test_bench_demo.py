"""``memdoor demo``: the shipped demo problems, the side-by-side outcome and its honest verdict."""

from __future__ import annotations

import json

import pytest
from bench_helpers import answers_file, run_cli

from memdoor.bench.demo import ProblemOutcome, RowOutcome, demo_problems_path, verdict
from memdoor.judging.programs import grade, run_on
from memdoor.problems.load import load_problems

REFERENCE = """```python
def compress(s):
    out, i = [], 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(s[i] + (str(j - i) if j - i > 1 else ""))
        i = j
    return "".join(out)

def second_largest(values):
    distinct = sorted(set(values))
    return distinct[-2] if len(distinct) >= 2 else None

def merge(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out
```"""
"""Correct solutions of the three demo problems, in one answer."""

FIRST_TRY = REFERENCE.replace('(str(j - i) if j - i > 1 else "")', "str(j - i)").replace(
    "<= out[-1][1]", "< out[-1][1]"
)
"""The typical first attempt: writes runs of one as "a1", and does not merge touching intervals."""


def test_the_demo_problems_load_and_a_correct_answer_passes_every_test(sandbox):
    problems = load_problems(str(demo_problems_path()))
    assert [p.id for p in problems] == ["compress", "second-largest", "merge-touching"]
    code = REFERENCE.split("```python\n")[1].split("```")[0]
    for p in problems:
        assert p.hidden_tests and p.public_tests
        assert grade(p, code, sandbox).passed, p.id
    # The trap each problem sets is visible in its public examples: the first try fails them.
    first = FIRST_TRY.split("```python\n")[1].split("```")[0]
    public = {
        p.id: run_on(p, first, p.public_tests, sandbox, stop_at_first_failure=False).passed for p in problems
    }
    assert public == {"compress": False, "second-largest": True, "merge-touching": False}


def _row(passed: bool, tokens: int, compute: float = 1.0, seconds: float = 1.0) -> RowOutcome:
    return RowOutcome(passed=passed, tokens=tokens, compute=compute, seconds=seconds, did="")


@pytest.mark.parametrize(
    ("single", "team", "says"),
    [
        (
            [False, True],
            [True, True],
            "the team solved 1 problem the single agent missed, at 3.0× the compute",
        ),
        ([True, True], [True, True], "both solved everything here, so the team only added cost"),
        ([False, False], [False, False], "the team did not help on these problems"),
        ([True, False], [False, True], "the team won 1 and lost 1"),
    ],
)
def test_the_verdict_says_plainly_whether_the_team_helped(single, team, says):
    problems = [
        ProblemOutcome(problem_id=f"p{i}", single=_row(s, 100), team=_row(t, 300, compute=3.0, seconds=2.0))
        for i, (s, t) in enumerate(zip(single, team, strict=True))
    ]
    text = verdict(problems)
    assert text.startswith(f"single agent {sum(single)}/2, team {sum(team)}/2")
    assert says in text and "2.0× the seconds" in text


def test_the_demo_command_shows_both_rows_and_exits_0_whatever_the_models_scored(tmp_path):
    # The team's first agent makes the single agent's request (replayed); its other agents and the
    # repairs get the correct answer: the team wins on the problems whose examples catch the first try.
    answers = answers_file(tmp_path, [FIRST_TRY, REFERENCE])
    out = tmp_path / "demo"
    result = run_cli("demo", "--model", f"scripted:{answers}", "--team", "hybrid:3", "--out", out)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    table = [line for line in lines if line.startswith(("compress", "second-largest", "merge-touching"))]
    assert len(table) == 3 and all("single" not in line for line in table)
    assert any(line.startswith("single agent ") for line in lines)
    assert f"memdoor report {out}" in result.stdout
    doc = json.loads(run_cli("report", out, "--json").stdout)
    assert set(doc["strategies"]) == {"single", "hybrid:3"}
    assert doc["run"]["calls_charged"] > doc["run"]["calls_made"], "the single draft was shared"
    as_json = run_cli(
        "demo", "--model", f"scripted:{answers}", "--json", "--out", out
    )  # resumes: nothing to do
    assert as_json.returncode == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    assert [p["problem_id"] for p in doc["problems"]] == ["compress", "second-largest", "merge-touching"]
    assert doc["verdict"].startswith("single agent ")


def test_a_demo_whose_model_is_down_exits_1_naming_the_failure(tmp_path):
    result = run_cli(
        "demo",
        "--model",
        "openai:m@http://127.0.0.1:9/v1?max_retries=0",
        "--team",
        "parallel:2",
        "--out",
        tmp_path / "d",
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "failed to run" in result.stderr
