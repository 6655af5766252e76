"""memdoor.review.counting: which findings the review's exit code counts (--fail-on, --fail-on-unverified)."""

from __future__ import annotations

from memdoor.review.counting import at_or_above, counted_severities


def test_a_verified_finding_counts_at_its_own_severity_and_an_unverified_one_only_when_asked():
    assert counted_severities("high", True, [], unverified=False) == ["high"]
    assert counted_severities("high", False, [], unverified=False) == []
    assert counted_severities("high", False, [], unverified=True) == ["high"]


def test_merged_reading_findings_count_only_with_unverified_ones_and_only_a_consensus():
    merged = [("critical", True), ("critical", False), ("low", True)]
    assert counted_severities("medium", True, merged, unverified=False) == ["medium"]
    assert counted_severities("medium", True, merged, unverified=True) == ["medium", "critical", "low"]


def test_at_or_above_compares_by_rank_and_an_unknown_severity_is_none():
    assert at_or_above(["low", "high"], "high")
    assert at_or_above(["critical"], "high")
    assert not at_or_above(["medium", "low"], "high")
    assert not at_or_above(["severe", "HIGH"], "info")  # not severities: never counted
    assert not at_or_above([], "info")
