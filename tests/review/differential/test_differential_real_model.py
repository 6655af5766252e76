"""Slow tier: ``memdoor review`` with the real embedded 0.5B writing inputs for the differential stage.

The change breaks a function no test covers (``spread`` skips the last value) and says it is a
refactoring: the review must report it as a verified finding with an input and both outputs, whatever
the model writes, and the model must have been asked (one call per agent for inputs). A change the
description asks for (``spread`` raises on empty input) leaves the verdict to the model: its answer must be
read as a verdict (not "none"), whichever it gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from review_helpers import diff_of, git, make_repo
from test_differential_stage import BROKEN, RAISES, STATS

pytestmark = pytest.mark.slow


def _review(small_model: str, tmp_path, changed: str, description: str) -> dict:
    repo = make_repo(tmp_path / "repo")
    (repo / "stats.py").write_text(STATS)
    git(repo, "add", "stats.py")
    git(repo, "commit", "-qm", "stats")
    (tmp_path / "change.diff").write_text(diff_of(repo, "stats.py", changed))
    proc = subprocess.run(
        [sys.executable, "-m", "memdoor", "review", str(tmp_path / "change.diff"), "--repo", str(repo),
         "--stages", "differential", "--agents", "1", "--model", small_model, "--max-tokens", "256",
         "--description", description, "--format", "json", "--fail-on", "never"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "MEMDOOR_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_a_broken_refactoring_is_a_finding_with_its_counterexample(small_model, tmp_path):
    report = _review(small_model, tmp_path, BROKEN, "refactor, no behaviour change")
    found = [f for f in report["findings"] if f.get("verified") and f.get("file") == "stats.py"]
    assert found, report["findings"]
    example = found[0]["counterexample"]
    assert example["function"] == "spread" and example["old"] != example["new"]
    assert report["ledger"]["calls"] >= 1, "the model was never asked for inputs"


def test_the_model_s_verdict_on_an_asked_for_change_is_read(small_model, tmp_path):
    report = _review(small_model, tmp_path, RAISES, "spread now raises ValueError on empty input")
    assert report["differential"]["rule"] == "agents"
    votes = [v for d in report["differential"]["differences"] for v in d["votes"].values()]
    assert votes, "no difference was judged: " + json.dumps(report["differential"])[:2000]
    # an answer with no verdict in it is recorded as "none": the prompt failed the real model
    assert all(v in ("intended", "unintended", "unclear") for v in votes), votes
