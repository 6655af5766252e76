"""The review benchmark's scoring (review_cases.scoring) on the JSON of a real review: a ReviewReport that
``run_review`` builds (scripted agent, a real repository, the sandboxed test command, the differential
stage), so that renaming a field of the report that the scoring reads breaks this test, where a
hand-written report would keep the old name."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from review_cases.scoring import lost_stage, score

from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review.formats import to_json
from memdoor.review.session import ReviewConfig, prepare, run_review
from memdoor.run.env import RunEnv

SOLUTION = '''def spread(xs):
    """The largest value minus the smallest."""
    if not xs:
        return 0
    lo = hi = xs[0]
    for x in xs:
        lo, hi = min(lo, x), max(hi, x)
    return hi - lo
'''
BROKEN = SOLUTION.replace("    for x in xs:", "    for x in xs[:-1]:")
CHANGED = [SOLUTION.splitlines().index("    for x in xs:") + 1]
TESTS = """import unittest
from solution import spread


class T(unittest.TestCase):
    def test_spread(self):
        self.assertEqual(spread([1, 5]), 4)
"""
READ = """My review.
```json
{"findings": [{"file": "solution.py", "line": 6, "end_line": 6, "severity": "high", "kind": "bug",
  "message": "the loop skips the last value", "confidence": 0.9}]}
```
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _case(root: Path) -> str:
    """A repository holding the case's solution and its test, and the diff of the broken change."""
    root.mkdir()
    _git(root, "init", "-q")
    (root / "solution.py").write_text(SOLUTION)
    (root / "test_solution.py").write_text(TESTS)
    _git(root, "add", ".")
    _git(root, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "case")
    (root / "solution.py").write_text(BROKEN)
    diff = _git(root, "diff")
    (root / "solution.py").write_text(SOLUTION)
    return diff


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="memdoor-scoring-test-") as tmp:
        yield Path(tmp)


async def test_the_scoring_reads_a_real_reports_json(sandbox, tmp_path, workdir):
    diff = _case(tmp_path / "repo")
    pool = ModelPool()
    pool.add("scripted:0", ScriptedModel([READ], spec="scripted:0"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path / "traces")
    config = ReviewConfig(
        agents=1, models=["scripted:0"], test="python3 -m unittest -q", differential_inputs=0,
        description="Refactor spread, no behaviour change.",
    )  # fmt: skip
    report = await run_review(prepare(diff, tmp_path / "repo", config, workdir), config, env)
    assert report.error is None and report.complete, report.error or report.incomplete_reason
    out = to_json(report)

    row = score(out, "missed", CHANGED)
    assert row["flagged"] and row["flagged_any"] and row["at_place"] and row["lost"] is None
    assert (row["complete"], row["error"], row["trace_id"]) == (True, None, report.trace_id)
    assert row["calls"] == 1 and row["tokens"] > 0 and row["seconds"] > 0
    assert set(row["stage_seconds"]) == {
        "tests (base)",
        "tests (change)",
        "differential",
        "reading",  # timed apart by the review itself
        "rest (set-up)",
    }
    assert row["stage_seconds"]["reading"] == report.reading_seconds > 0
    marks = sorted((f["source"], f["verified"], f["counterexample"]) for f in row["findings"])
    assert marks == [("differential", True, True), ("tests", True, False)]  # the agents': merged, below
    (shown,) = [f for f in out["findings"] if f["source"] == "differential"]
    assert [a["line"] for a in shown["also_read"]] == [6]  # the agents read the loop the input shows broken
    assert lost_stage(out) == "shown, reported below high"  # read from the differential record's outcome
    # every field of a finding the scoring reads, by its name in the report
    for f in out["findings"]:
        assert {
            "file",
            "line",
            "end_line",
            "severity",
            "kind",
            "source",
            "verified",
            "counterexample",
        } <= set(f)
