"""The review benchmark's runner (benchmarks/review_bench.py) and scoring (review_cases.scoring): flags read
from a review's JSON report, the tables, teams, resuming, and the command line driven as a process (a
stand-in for memdoor that answers like its review; no model)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
import review_bench
from review_cases.records import ReviewCase
from review_cases.scoring import at_place, flagged, lost_stage, lost_table, score, stage_seconds, summary

HIGH_TEST = {"file": "solution.py", "line": 8, "end_line": 8, "severity": "high", "source": "tests"}
HIGH_READ = {"file": "solution.py", "line": 8, "end_line": 8, "severity": "critical", "source": "agents",
             "verified": False}  # fmt: skip


def test_a_case_is_flagged_by_a_verified_finding_at_high_or_worse():
    assert flagged({"findings": [HIGH_TEST | {"verified": True}]})
    assert flagged({"findings": [HIGH_TEST]})  # before `verified`: the test stage's findings are verified
    assert flagged(
        {"findings": [{"severity": "high", "source": "agents", "counterexample": {"input": "[]"}}]}
    )
    assert not flagged({"findings": [HIGH_READ]})
    assert flagged({"findings": [HIGH_READ]}, verified_only=False)
    assert not flagged({"findings": [HIGH_TEST | {"severity": "medium"}]})
    assert not flagged({"findings": [], "minority": [HIGH_TEST]})
    assert at_place({"findings": [HIGH_TEST]}, [10]) and not at_place({"findings": [HIGH_TEST]}, [20])


def test_the_stage_that_lost_a_bug_is_read_from_the_differential_record():
    assert lost_stage({}) == "no differential record"
    assert lost_stage({"differential": {"outcome": "no difference"}}) == "no input showed a difference"
    assert lost_stage({"differential": {"outcome": "intended"}}) == "shown but judged intended"
    assert lost_stage({"differential": {"outcome": "not reproduced"}}) == "not reproduced"
    judged = {"differences": [{"verdict": "intended", "reproduced": True}]}
    assert lost_stage({"differential": judged}) == "shown but judged intended"
    assert lost_stage({"differential": {"differences": [], "not_reproduced": [{}]}}) == "not reproduced"
    timed = {"tests": {"seconds": 2.0}, "base_tests": {"seconds": 1.0}, "differential": {"seconds": 5.0},
             "ledger": {"wall_seconds": 20.0}}  # fmt: skip
    assert stage_seconds(timed) == {"tests (base)": 1.0, "tests (change)": 2.0, "differential": 5.0,
                                    "rest (reading, set-up)": 12.0}  # fmt: skip
    # a report that times the reading review, or says it did not run, leaves set-up alone as the rest
    read = timed | {"stages_run": ["tests", "differential", "reading"], "reading_seconds": 10.0}
    assert stage_seconds(read)["reading"] == 10.0 and stage_seconds(read)["rest (set-up)"] == 2.0
    unread = timed | {"stages_run": ["tests", "differential"], "reading_seconds": None}
    assert stage_seconds(unread)["rest (set-up)"] == 12.0 and "reading" not in stage_seconds(unread)


def _row(kind: str, hit: bool | None, stages: str = "execution") -> dict:
    return {"kind": kind, "flagged": hit, "flagged_any": hit, "stages": stages, "agents": 1, "models": ["m:a"],
            "tokens": 100, "compute": 2e12, "seconds": 10.0, "lost": None if hit else "not reproduced"}  # fmt: skip


def test_the_summary_gives_each_rate_with_its_interval():
    rows = [_row("missed", True), _row("missed", False), _row("caught", True), _row("refactor", True),
            _row("intended", False), _row("mixed", True), _row("missed", None)]  # fmt: skip
    table = summary(rows)
    line = table.split("\n")[2]
    assert "| execution | a |" in line
    assert (
        "| 1/1 [0.21, 1.00] | 1/2 [0.09, 0.91] | 1/1 [0.21, 1.00] | 1/1 [0.21, 1.00] | 0/1 [0.00, 0.79] |"
        in line
    )
    assert (
        "| 3/4 [0.30, 0.95] | 3/4 [0.30, 0.95] | 0.75 [" in line
    )  # precision, recall, F1 (TP 3, FP 1, FN 1)
    assert line.endswith("| 100 | 2.00 | 10.0 | 1 |")  # medians; one review gave no report


def test_the_lost_table_names_each_lost_bug_by_kind_and_stage():
    rows = [
        _row("missed", True) | {"problem_id": "HumanEval/3"},
        _row("missed", False) | {"problem_id": "HumanEval/12", "lost": "shown but judged intended"},
        _row("missed", False) | {"problem_id": "HumanEval/141", "lost": "no input showed a difference"},
        _row("mixed", False) | {"problem_id": "HumanEval/102", "lost": "shown but judged intended"},
        _row("caught", False) | {"problem_id": "HumanEval/7"},  # the public tests fail: not in this table
        _row("missed", None) | {"problem_id": "HumanEval/9"},  # no report: not counted
    ]
    lines = lost_table(rows).split("\n")
    assert lines[2] == "| execution | a | missed | 2/3 | 1 (141) | 1 (12) | 0 |"
    assert lines[3] == "| execution | a | mixed | 1/1 | 0 | 1 (102) | 0 |"
    assert len(lines) == 4


def test_teams_expand_repeated_specs():
    assert review_bench.parse_team("5@local:a,local:b*4") == (5, ["local:a"] + ["local:b"] * 4)
    assert review_bench.parse_team("1@local:a") == (1, ["local:a"])
    for bad in ("local:a", "0@local:a", "2@", "2@local:a*x"):
        with pytest.raises(ValueError):
            review_bench.parse_team(bad)
    assert review_bench.parse_quota("missed=3,mixed=0")["missed"] == 3
    with pytest.raises(ValueError):
        review_bench.parse_quota("bugs=3")


def test_a_torn_last_line_is_dropped_and_the_file_rewritten(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text('{"case": "a"}\n{"case": "b"}\n{"case": ')
    assert [r["case"] for r in review_bench.load_rows(out)] == ["a", "b"]
    assert out.read_text() == '{"case": "a"}\n{"case": "b"}\n'


FAKE = r"""
import json, os, sys
from pathlib import Path

args = sys.argv[1:]
if args[:2] == ["review", "--help"]:
    print("usage: memdoor review [--description TEXT|@FILE] [--stages LIST]")
    sys.exit(0)
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
diff = Path(args[1]).read_text()
description = Path(args[args.index("--description") + 1][1:]).read_text()
stages = args[args.index("--stages") + 1]
bug = ">= limit" in diff and "differential" in stages
finding = {"file": "solution.py", "line": 8, "end_line": 8, "severity": "high", "verified": True,
           "source": "differential", "counterexample": {"function": "f", "input": "[[4], 4]", "old": "0", "new": "1"}}
print(json.dumps({
    "complete": True, "findings": [finding] if bug else [], "error": None, "trace_id": "t1",
    "differential": None if "differential" not in stages else {"outcome": "reported" if bug else "no difference",
                                                                "seconds": 1.5},
    "ledger": {"prompt_tokens": 10, "completion_tokens": 5, "calls": 1, "compute": 1e12, "wall_seconds": 3.0},
    "description_seen": description,
}))
"""


def _case(kind: str, after: str) -> ReviewCase:
    before = "def f(xs, limit):\n    n = 0\n    for x in xs:\n        if x > limit:\n            n += 1\n    return n\n"
    return ReviewCase(id=f"Demo/1:{kind}", problem_id="Demo/1", entry="f", kind=kind, transform="t",
                      description="Tidy up `f`.", before=before, after=before.replace("x > limit", after),
                      tests_before="", tests_after="", changed=[4], public_fails=False)  # fmt: skip


def test_reviews_run_through_the_command_line_and_resume(tmp_path, monkeypatch):
    fake = tmp_path / "fake_memdoor.py"
    fake.write_text(FAKE)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    args = argparse.Namespace(memdoor=f"{sys.executable} {fake}", review_timeout=60.0, review_arg=[],
                              out=tmp_path / "out" / "results.jsonl", team=["2@local:a,local:b*1"],
                              stages=["reading", "execution"], seed=7)  # fmt: skip
    cases = [_case("missed", "x >= limit"), _case("refactor", "limit < x")]
    rows = review_bench.run_rows(cases, args)
    assert len(rows) == 4
    by = {(r["case"], r["stages"]): r for r in rows}
    assert by[("Demo/1:missed", "execution")]["flagged"] is True
    assert by[("Demo/1:missed", "reading")]["flagged"] is False
    assert by[("Demo/1:missed", "reading")]["lost"] == "no differential record"
    assert by[("Demo/1:refactor", "execution")]["flagged"] is False
    assert by[("Demo/1:missed", "execution")]["stage_seconds"]["differential"] == 1.5
    assert {r["code"] for r in rows} == {review_bench.code_revision()}  # the memdoor source each row ran
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    first = calls[0]
    assert (
        first[first.index("--stages") + 1] == "reading"
        and first[first.index("--test") + 1] == "python3 -m unittest test_public"
    )
    assert first.count("--model") == 2 and first[first.index("--seed") + 1] == "7"
    assert calls[1][calls[1].index("--stages") + 1] == "tests,differential"
    assert len(review_bench.run_rows(cases, args)) == 4  # resumed: every result read back, none run again
    assert len(log.read_text().splitlines()) == 4
    rebuilt = [cases[0].model_copy(update={"description": "Refactor `f`; no behaviour change."}), cases[1]]
    assert len(review_bench.run_rows(rebuilt, args)) == 6  # the changed case is reviewed again, per stage set
    assert len(log.read_text().splitlines()) == 6
    assert len(review_bench.latest(review_bench.load_rows(args.out))) == 4
    assert "| execution | a + b |" in review_bench.tables(review_bench.load_rows(args.out))


def test_the_code_revision_is_the_commit_of_the_imported_memdoor_and_says_when_it_has_changes():
    import memdoor

    code = review_bench.code_revision()
    src = str(Path(memdoor.__file__).resolve().parent.parent)
    head = subprocess.run(
        ["git", "-C", src, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True
    )
    if head.returncode != 0:
        assert code is None
        return
    dirty = subprocess.run(
        ["git", "-C", src, "status", "--porcelain", "--", src], capture_output=True, text=True
    )
    assert code == head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def test_rows_of_the_first_benchmark_point_to_it():
    assert "review_bench_v1.py" in review_bench.tables([{"problem_id": "3244", "detected": False}])


def test_a_review_without_a_report_is_no_result(tmp_path):
    case = _case("missed", "x >= limit")
    ran = {"exit_code": 3, "process_seconds": 1.0, "report": None, "stderr": "memdoor: no sandbox\n"}
    row = review_bench.result_row(case, "both", 1, ["m:a"], ran)
    assert row["flagged"] is None and row["error"] == "memdoor: no sandbox"
    assert score({"findings": [HIGH_TEST]}, "refactor", [4])["lost"] is None
