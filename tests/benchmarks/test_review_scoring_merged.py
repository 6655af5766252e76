"""The review benchmark's two flags count what ``memdoor review``'s exit code counts (ReviewReport.fails):
a reading finding merged into an execution finding (``also_read``) counts, when it was a consensus
finding, at its own severity in the count with unverified findings, and never in the verified-only count."""

from __future__ import annotations

import pytest
from review_cases.scoring import flagged, score

from memdoor.review.consensus import Group
from memdoor.review.findings import AlsoRead
from memdoor.review.formats import to_json
from memdoor.review.session import ReviewConfig, ReviewReport


def _report(read_severity: str, consensus: bool, **config) -> ReviewReport:
    """A 'both stages' report whose only finding is a low 'behaviour changed' difference with a reading
    finding merged into it."""
    read = AlsoRead(agents=["a0", "a1"], consensus=consensus, line=6, end_line=6, severity=read_severity,
                    message="the loop skips the last value")  # fmt: skip
    shown = Group(file="solution.py", line=6, end_line=6, severity="low", kind="bug", message="behaviour changed",
                  agents=[], verified=True, source="differential", also_read=[read])  # fmt: skip
    cfg = ReviewConfig(agents=2, models=["scripted:0"], fail_on="high", stages=["tests", "differential", "reading"],
                       **config)  # fmt: skip
    return ReviewReport(findings=[shown], agents=2, quorum=1, config=cfg)


def test_a_merged_consensus_reading_finding_counts_only_with_unverified_findings():
    out = to_json(_report("high", consensus=True))
    row = score(out, "missed", [6])
    assert row["flagged_any"] is True  # the reading review's consensus said high: counted, as unmerged
    assert row["flagged"] is False  # verified-only: the execution finding's own severity, low
    assert not flagged({"findings": out["findings"]}, verified_only=True)


@pytest.mark.parametrize("severity", ["high", "medium"])
@pytest.mark.parametrize("consensus", [True, False])
@pytest.mark.parametrize("unverified", [True, False])
def test_the_flags_count_what_the_exit_code_counts(severity, consensus, unverified):
    report = _report(severity, consensus, fail_on_unverified=unverified)
    assert flagged(to_json(report), verified_only=not unverified) is report.fails()
