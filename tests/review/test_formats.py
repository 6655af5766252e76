"""The JSON object issue 15 names, and the Markdown a person reads."""

from __future__ import annotations

import json

from review_helpers import report

from memdoor.review.formats import to_json, to_markdown
from memdoor.review.patch import Patch
from memdoor.review.testrun import TestRun

FIELDS = {"file", "line", "end_line", "severity", "kind", "message", "suggestion", "agents"}


def test_json_has_the_issue_fields():
    tests = TestRun(command="make test", passed=True, exit_code=0, output="ok")
    r = report(patch=Patch(diff="--- a/calc.py\n", findings=[0], tests=tests))
    out = json.loads(json.dumps(to_json(r)))
    assert set(out["findings"][0]) >= FIELDS and out["findings"][0]["agents"] == ["agent0", "agent1"]
    assert set(out["minority"][0]) >= FIELDS
    assert out["patch"]["diff"] == "--- a/calc.py\n"
    t = out["patch"]["tests"]
    assert (t["command"], t["passed"], t["output"]) == ("make test", True, "ok")
    assert out["ledger"]["calls"] == 1 and out["ledger"]["prompt_tokens"] == 10
    assert out["skipped"] == [{"file": "big.py", "reason": "too big"}] and out["trace_id"] == "abc"
    assert json.loads(json.dumps(to_json(report())))["patch"] is None


def test_markdown_says_who_agreed_and_never_fixed_without_tests():
    md = to_markdown(report(patch=Patch(diff="--- a/calc.py\n+++ b/calc.py\n", findings=[0])))
    assert "agreed by 2 of 3: agent0, agent1" in md and "calc.py:6" in md
    assert "Not tested" in md and "fixed" not in md.lower()
    assert "skipped big.py: too big" in md and "ignored the answer of agent2" in md
    failed = TestRun(command="make test", passed=False, exit_code=2, output="boom")
    md = to_markdown(report(patch=Patch(diff="d\n", findings=[0], tests=failed)))
    assert "**failed (exit 2)**" in md and "boom" in md
    oom = TestRun(command="make test", passed=False, exit_code=137, memory_exceeded=True)
    md = to_markdown(report(patch=Patch(diff="d\n", findings=[0], tests=oom)))
    assert "**out of memory**" in md
    assert to_json(report(patch=Patch(diff="d\n", findings=[0], tests=oom)))["patch"]["tests"][
        "memory_exceeded"
    ]
    assert "None." in to_markdown(report(findings=[]))
