"""Slow tier: ``memdoor review`` with the real embedded 0.5B writing inputs for the differential stage.

The change breaks a function no test covers (``spread`` skips the last value) and says it is a
refactoring: the review must report it as a verified finding with an input and both outputs, whatever
the model writes, and the model must have been asked (one call per agent for inputs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from review_helpers import diff_of, git, make_repo
from test_differential_stage import BROKEN, STATS

pytestmark = pytest.mark.slow


def test_a_broken_refactoring_is_a_finding_with_its_counterexample(small_model, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "stats.py").write_text(STATS)
    git(repo, "add", "stats.py")
    git(repo, "commit", "-qm", "stats")
    (tmp_path / "change.diff").write_text(diff_of(repo, "stats.py", BROKEN))
    proc = subprocess.run(
        [sys.executable, "-m", "memdoor", "review", str(tmp_path / "change.diff"), "--repo", str(repo),
         "--stages", "differential", "--agents", "1", "--model", small_model, "--max-tokens", "256",
         "--description", "refactor, no behaviour change", "--format", "json", "--fail-on", "never"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "MEMDOOR_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    found = [f for f in report["findings"] if f.get("verified") and f.get("file") == "stats.py"]
    assert found, report["findings"]
    example = found[0]["counterexample"]
    assert example["function"] == "spread" and example["old"] != example["new"]
    assert report["ledger"]["calls"] >= 1, "the model was never asked for inputs"
