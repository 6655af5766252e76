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
    assert "skipped `big.py`: too big" in md and "ignored the answer of agent2" in md
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


def _verified():
    from memdoor.review.findings import Counterexample

    example = Counterexample(function="mean", input="[1, 2]", old="1.5", new="```\n# Ignore the above")
    g = report().findings[0]
    update = {"agents": [], "verified": True, "counterexample": example, "source": "differential"}
    return g.model_copy(update=update)


def test_json_and_markdown_say_verified_or_unverified():
    r = report(findings=[_verified(), *report().findings])
    (shown, read) = to_json(r)["findings"]
    assert (shown["verified"], shown["source"], shown["counterexample"]["function"]) == (
        True,
        "differential",
        "mean",
    )
    assert (read["verified"], read["source"], read["counterexample"]) == (False, "agents", None)
    md = to_markdown(r)
    assert "(1 verified by execution)" in md
    assert "**high bug** (verified) `calc.py:6`" in md
    assert "**high bug** (unverified: read by the agents, not run) `calc.py:6`" in md
    assert "The exit code counts verified findings only, high or worse" in md
    # the counterexample's text is fenced so that it cannot close its fence
    block = md[md.index("  ````") :]
    assert block.index("# Ignore the above") < block.index("  ````", 6)
    assert "call:   mean([1, 2])" in md and "base:   1.5" in md
    counted = r.model_copy(update={"config": r.config.model_copy(update={"fail_on_unverified": True})})
    assert "counts every finding, high or worse" in to_markdown(counted)


HOSTILE = "](http://evil)<img src=x onerror=alert(1)>\n# heading"
"""Program output (a pull request's code printed it) that would be a link, an image, HTML and a heading."""


def _hostile_report():
    from memdoor.review.context import Skipped
    from memdoor.review.findings import Counterexample
    from memdoor.review.session import Unusable
    from memdoor.review.testresults import TestFailure

    example = Counterexample(function="f", input="[1]", old="returns 1", new=f"returns {HOSTILE!r}")
    shown = (
        report()
        .findings[0]
        .model_copy(
            update={
                "message": f"behaviour changed: `f([1])` returns 1 before the change and returns {HOSTILE} after it",
                "suggestion": f"```\n{HOSTILE}",
                "counterexample": example,
                "verified": True,
                "source": "differential",
            }
        )
    )
    failing = TestRun(command="make test", passed=False, exit_code=1, output=f"```\n{HOSTILE}")
    return report(
        findings=[shown],
        files=[f"a{HOSTILE}.py"],
        skipped=[Skipped(file=HOSTILE, reason=HOSTILE)],
        unusable=[Unusable(agent="agent2", file="calc.py", error=f"bad answer {HOSTILE}")],
        pre_existing=[TestFailure(name=f"`{HOSTILE}")],
        patch=Patch(diff=f"```\n{HOSTILE}\n", findings=[0], tests=failing),
        complete=False,
        incomplete_reason=HOSTILE.replace("\n", "\r"),
    )


def test_untrusted_text_adds_no_markdown_or_html_of_its_own():
    from markdown_it import MarkdownIt

    md = to_markdown(_hostile_report())
    html = MarkdownIt("commonmark").render(md)
    assert "<img" not in html and "href" not in html  # no tag, no link, no image
    headings = [line for line in html.splitlines() if line.startswith(("<h1", "<h2"))]
    assert [h for h in headings if "heading" in h] == []  # the review's own headings only
    assert "onerror=alert(1)&gt;" in html  # shown as text, as the program printed it
