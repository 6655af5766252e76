"""A reading finding an execution shows is merged into it (memdoor.review.corroborate): the rule on its
own, the outputs of a merged finding, and a review end to end (the real sandbox, scripted agents) where
the agents read the function the differential stage found broken and another place."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from review_helpers import answer, diff_of, git, report

from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review.consensus import Consensus, Group
from memdoor.review.corroborate import hunk_lines, merge, same_problem
from memdoor.review.diff import parse_diff
from memdoor.review.differential.stage import findings_of
from memdoor.review.findings import Counterexample
from memdoor.review.formats import to_json, to_markdown
from memdoor.review.sarif import FINGERPRINT, fingerprint, to_sarif
from memdoor.review.session import ReviewConfig, prepare, run_review
from memdoor.review.teststage import regression
from memdoor.run.env import RunEnv

ONE_HUNK = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -6,1 +6,1 @@
-    return total / len(xs)
+    return total / (len(xs) - 1)
"""
TWO_HUNKS = ONE_HUNK + "@@ -20,1 +20,1 @@\n-LIMIT = 1\n+LIMIT = 2\n"
EXAMPLE = Counterexample(function="mean", input="[1, 2]", old="returns 1.5", new="returns 3.0")


def read(line: int, end_line: int | None = None, **kw) -> Group:
    """A reading-review group (unverified, source agents)."""
    base = dict(file="calc.py", line=line, end_line=end_line or line, severity="high", kind="bug",
                message="divides by len - 1", agents=["agent0", "agent1"], confidence=0.8)  # fmt: skip
    return Group(**{**base, **kw})


def shown(line: int = 6, end_line: int = 6, **kw) -> Group:
    """A difference the differential stage reported (verified, with its counterexample)."""
    base = dict(file="calc.py", line=line, end_line=end_line, severity="high", kind="bug", agents=["agent0"],
                message="`mean([1, 2])` returns 1.5 before the change and returns 3.0 after it",
                confidence=1.0, verified=True, counterexample=EXAMPLE, source="differential")  # fmt: skip
    return Group(**{**base, **kw})


def consensus(findings=(), minority=()) -> Consensus:
    return Consensus(agents=3, quorum=2, findings=list(findings), minority=list(minority))


def test_a_reading_finding_on_the_changed_lines_of_a_difference_is_the_same_problem():
    d, lines = shown(6, 8), {6, 7, 8, 20}
    assert same_problem(read(7), d, one_place=False, changed=lines)
    assert same_problem(read(2, 6), d, one_place=False, changed=lines)
    assert not same_problem(read(7), d, one_place=False, changed={6, 8})  # between, unchanged: not it
    assert not same_problem(read(9), d, one_place=False, changed=lines)  # next to them: not widened
    assert not same_problem(read(5), d, one_place=False, changed=lines)
    assert not same_problem(read(20), d, one_place=False, changed=lines)  # changed, but not the function's
    assert not same_problem(read(7, file="other.py"), d, one_place=False, changed=lines)
    assert not same_problem(read(7, kind="style"), d, one_place=False, changed=lines)  # a remark: not run
    assert not same_problem(read(7), read(7), one_place=True, changed=lines)  # only an execution shows


def test_a_failing_test_is_matched_only_when_the_diff_changed_one_place():
    test = regression("test_calc.T.test_mean", "3.0 != 2", parse_diff(ONE_HUNK))
    assert same_problem(read(6), test, one_place=True, changed={6})
    assert not same_problem(read(6), test, one_place=False, changed={6})  # which place broke it: unknown
    reading = consensus([read(6)])
    (one,) = merge([test], reading, parse_diff(ONE_HUNK)).findings
    assert one.source == "tests" and [a.agents for a in one.also_read] == [["agent0", "agent1"]]
    two = regression("test_calc.T.test_mean", "3.0 != 2", parse_diff(TWO_HUNKS))
    kept = merge([two], reading, parse_diff(TWO_HUNKS))
    assert kept.findings == [two, read(6)] and kept.merged == 0 and not kept.findings[1].verified


def test_merging_keeps_every_execution_finding_as_it_was():
    test = regression("test_calc.T.test_mean", "3.0 != 2", parse_diff(ONE_HUNK))
    executed = [test, shown(), shown(message="another input", counterexample=EXAMPLE.model_copy(
        update={"input": "[4]"}))]  # fmt: skip
    out = merge(executed, consensus([read(6), read(6, kind="bug", message="x")], [read(6, agents=["a2"])]),
                parse_diff(ONE_HUNK))  # fmt: skip
    assert len(out.findings) == len(executed) and out.minority == [] and out.merged == 3
    for before, after in zip(executed, out.findings, strict=True):
        assert after.model_dump(exclude={"also_read"}) == before.model_dump(exclude={"also_read"})
    # each reading finding joins one execution finding: the first with a counterexample
    assert [len(g.also_read) for g in out.findings] == [0, 3, 0]
    assert [a.consensus for a in out.findings[1].also_read] == [True, True, False]


def test_a_reading_finding_elsewhere_stays_unverified_and_in_its_list():
    elsewhere, remark = read(20), read(6, kind="style", severity="low", agents=["agent2"])
    out = merge([shown()], consensus([elsewhere], [remark]), parse_diff(TWO_HUNKS))
    assert out.findings == [shown(), elsewhere] and out.minority == [remark] and out.merged == 0
    assert not out.findings[1].verified


def test_a_merged_finding_says_so_in_every_output_and_keeps_its_fingerprint():
    alone = shown()
    (merged,) = merge([alone], consensus([read(6)]), parse_diff(ONE_HUNK)).findings
    r = report(findings=[merged], minority=[])
    (j,) = json.loads(json.dumps(to_json(r)))["findings"]
    assert j["verified"] and j["counterexample"]["input"] == "[1, 2]"
    assert j["also_read"] == [{"agents": ["agent0", "agent1"], "consensus": True, "line": 6, "end_line": 6,
                               "severity": "high", "message": "divides by len - 1", "suggestion": None}]  # fmt: skip
    md = to_markdown(r)
    assert "(verified) `calc.py:6`" in md and "unverified" not in md.split("## Consensus findings")[1]
    assert "also raised by the reading review (2 of 3: agent0, agent1) at `calc.py:6`: divides by len" in md
    (res,) = to_sarif(r)["runs"][0]["results"]
    assert res["message"]["text"].startswith("[verified] ")
    assert "Also raised by the reading review (2 agent(s): agent0, agent1)." in res["message"]["text"]
    assert res["properties"]["also_read"][0]["agents"] == ["agent0", "agent1"]
    assert res["partialFingerprints"][FINGERPRINT] == fingerprint(alone)  # one alert across pushes
    assert to_json(report())["findings"][0]["also_read"] == []  # an unmerged finding: an empty list


STATS = '''def total(xs):
    """The sum of the numbers."""
    out = 0
    for x in xs:
        out += x
    return out


def halve(x):
    """Half of x."""
    y = x
    return y / 2
'''
BROKEN = STATS.replace("    for x in xs:\n", "    for x in xs[1:]:\n")  # line 4; no test covers it
ON_THE_BUG = {"file": "stats.py", "line": 4, "end_line": 4, "severity": "high", "kind": "bug",
              "message": "the loop skips the first element, so it is never added"}  # fmt: skip
# another place: far enough from line 4 that consensus does not group the two (consensus.NEAR_LINES)
ELSEWHERE = {"file": "stats.py", "line": 12, "end_line": 12, "severity": "critical", "kind": "bug",
             "message": "halve returns a float for an int"}  # fmt: skip
INPUTS = '```json\n[["[5, 1, 9]"]]\n```'


def reply(messages) -> str:
    """A scripted agent: inputs when asked for inputs, the two findings when asked to read the diff."""
    if "Both versions will be called" in messages[-1]["content"]:
        return INPUTS
    return answer(ON_THE_BUG, ELSEWHERE)


async def test_the_agents_reading_of_the_broken_function_is_merged_into_the_difference(
    sandbox, repo, tmp_path
):
    (repo / "stats.py").write_text(STATS)  # beside calc.py (conftest's repository), no test covers it
    git(repo, "add", "stats.py")
    git(repo, "commit", "-qm", "stats")
    pool = ModelPool()
    for i in range(2):
        pool.add(f"scripted:{i}", ScriptedModel(respond=reply, spec=f"scripted:{i}"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path / "traces")
    cfg = ReviewConfig(agents=2, models=["scripted:0", "scripted:1"], stages=["differential", "reading"],
                       description="refactor, no behaviour change", fail_on="critical")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="memdoor-corroborate-test-") as workdir:
        prepared = prepare(diff_of(repo, "stats.py", BROKEN), repo, cfg, Path(workdir))
        report = await run_review(prepared, cfg, env)
    assert report.error is None and report.stages_run == ["differential", "reading"]
    assert report.differential is not None
    # each stage's time is its own: the reading review's is kept apart from the differential stage's
    assert report.reading_seconds is not None and 0 < report.reading_seconds <= report.ledger.wall_seconds
    assert report.differential.seconds + report.reading_seconds <= report.ledger.wall_seconds
    assert to_json(report)["reading_seconds"] == report.reading_seconds
    executed = findings_of(report.differential)
    diffs = [g for g in report.findings if g.source == "differential"]
    assert executed and len(diffs) == len(executed) and all(g.verified for g in diffs)  # none dropped
    merged = [g for g in diffs if g.also_read]
    (one,) = merged  # the agents' finding on the broken loop: one finding, verified, with its input
    assert (one.file, one.line, one.counterexample is not None) == ("stats.py", 4, True)
    assert one.counterexample.function == "total"
    assert [(a.line, a.agents, a.message) for a in one.also_read] == [
        (4, ["agent0", "agent1"], ON_THE_BUG["message"])
    ]
    read = [g for g in report.findings if g.source == "agents"]
    (other,) = read  # the finding on another place stays, unverified
    assert (other.line, other.severity, other.verified) == (12, "critical", False)
    assert not any(g.source == "agents" and g.line == 4 for g in report.findings + report.minority)
    assert not report.fails()  # --fail-on critical: the critical finding is unverified, so not counted
    report.config = report.config.model_copy(update={"fail_on_unverified": True})
    assert report.fails()
    assert "also raised by the reading review" in to_markdown(report)


def test_merging_never_changes_the_exit_code():
    """A high reading finding on the changed line of a low difference (no description: behaviour changed)
    stays its own: it counts at high only when --fail-on counts unverified findings, as it would have
    with no difference; a minority one never. A reading finding no more severe is merged and counts the
    same."""
    low = shown(severity="low")
    for severity in ("high", "low"):
        for minority, counted in ((False, severity == "high"), (True, False)):
            one = read(6, severity=severity)
            reading = consensus(minority=[one]) if minority else consensus([one])
            out = merge([low], reading, parse_diff(ONE_HUNK))
            assert out.merged == (severity == "low") and out.findings[0].severity == "low"
            r = report(findings=out.findings, minority=out.minority)
            assert not r.fails()  # the verified finding is low
            r.config = r.config.model_copy(update={"fail_on_unverified": True})
            assert r.fails() is counted


# A one-line edit of a.py and the deletion of b.py: the deletion is what makes a test fail (ImportError).
EDIT_AND_DELETE = """diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def f(x):
-    return x + 1
+    return x + 2
diff --git a/b.py b/b.py
deleted file mode 100644
--- a/b.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def helper():
-    return 1
"""
RENAME = "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"
MODE = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"


def test_a_failing_test_is_not_merged_when_another_file_changed_without_lines_of_its_own():
    """A deleted, renamed or mode-only file is a place too: the test may fail because of it."""
    on_a = read(2, file="a.py", message="off by one: x + 2 should be x + 1")
    for diff in (EDIT_AND_DELETE, ONE_HUNK.replace("calc.py", "a.py") + RENAME, ONE_HUNK + MODE):
        files = parse_diff(diff)
        test = regression("test_helper", "ImportError: cannot import name 'helper' from 'b'", files)
        reading = consensus([on_a.model_copy(update={"file": test.file, "line": test.line})])
        out = merge([test], reading, files)
        assert out.merged == 0 and [g.verified for g in out.findings] == [True, False], diff
    alone = parse_diff(ONE_HUNK)  # the same edit alone: one place, merged
    test = regression("test_calc.T.test_mean", "3.0 != 2", alone)
    assert merge([test], consensus([read(6)]), alone).merged == 1


# a function changed at its first and last lines (3 and 7); lines 4-6 are left as they were
TOP_AND_BOTTOM = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -3,5 +3,5 @@
-    total = 0
+    total = 1
     for x in xs:
         total += x
     check(total)
-    return total / len(xs)
+    return total / (len(xs) - 1)
"""

DELETION = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -4,3 +4,2 @@
     for x in xs:
-        total += x
     return total / len(xs)
"""


def test_a_reading_finding_between_two_changed_lines_is_not_merged():
    files = parse_diff(TOP_AND_BOTTOM)
    difference = shown(3, 7)  # the function's first and last changed lines
    between, on_last = read(5, message="check() is called on an unchecked total"), read(7)
    out = merge([difference], consensus([between, on_last]), files)
    assert [a.line for a in out.findings[0].also_read] == [7]  # on a changed line: merged
    assert out.findings[1:] == [between] and not out.findings[1].verified  # unchanged line: its own
    # a program's span can cover the whole file: only its changed lines count
    program = shown(3, 200, counterexample=None)
    unchanged = read(100, message="SQL built by string concatenation")  # as severe as the program's
    out = merge([program], consensus([unchanged]), files)
    assert out.merged == 0 and out.findings == [program, unchanged]
    # lines deleted with nothing in their place: the two lines around the gap
    (deleting,) = parse_diff(DELETION)[0].hunks
    assert hunk_lines(deleting) == {4, 5} and hunk_lines(parse_diff(ONE_HUNK)[0].hunks[0]) == {6}


def test_a_reading_finding_more_severe_than_the_execution_finding_stays_its_own():
    """Merged, a critical claim would be shown at the execution's low severity: it stays, unverified."""
    low = shown(severity="low")
    critical, low_read = read(6, severity="critical"), read(6, severity="low", message="edge case")
    out = merge([low], consensus([critical, low_read]), parse_diff(ONE_HUNK))
    (shown_low, *rest) = out.findings
    assert shown_low.severity == "low" and [a.message for a in shown_low.also_read] == ["edge case"]
    assert rest == [critical] and out.merged == 1
    # another execution finding as severe takes it
    high, as_high = shown(message="another input"), critical.model_copy(update={"severity": "high"})
    out = merge([low, high], consensus([as_high]), parse_diff(ONE_HUNK))
    assert [len(g.also_read) for g in out.findings] == [0, 1]


def test_a_merged_reading_finding_keeps_its_suggestion():
    fixing = read(6, suggestion="    return total / len(xs)\n")
    (merged,) = merge([shown()], consensus([fixing]), parse_diff(ONE_HUNK)).findings
    assert merged.also_read[0].suggestion == "    return total / len(xs)\n"
    r = report(findings=[merged], minority=[])
    assert to_json(r)["findings"][0]["also_read"][0]["suggestion"] == "    return total / len(xs)\n"
    after = to_markdown(r).split("also raised by the reading review", 1)[1]
    assert "    return total / len(xs)" in after.split("## ", 1)[0]
    (res,) = to_sarif(r)["runs"][0]["results"]
    assert res["partialFingerprints"][FINGERPRINT] == fingerprint(shown())
