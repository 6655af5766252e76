"""Grouping "same place and same problem", the ⌈N/2⌉ rule, and the ranking of minority findings."""

from __future__ import annotations

import pytest
from review_helpers import finding

from memdoor.review.consensus import decide, group_findings, quorum, similarity
from memdoor.review.findings import AgentReview, Finding


def rev(agent: str, *findings: dict, logprob: float | None = None, error: str | None = None) -> AgentReview:
    return AgentReview(
        agent=agent,
        part="calc.py",
        findings=[Finding.model_validate(f) for f in findings],
        mean_logprob=logprob,
        error=error,
    )


@pytest.mark.parametrize(("n", "need"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (6, 3), (7, 4)])
def test_quorum_is_half_rounded_up(n, need):
    assert quorum(n) == need


def test_three_of_five_is_consensus_two_of_five_is_not():
    bug = finding()
    other = finding(line=40, end_line=40, message="loop could be sum()", kind="style", severity="low")
    reviews = [
        rev("agent0", bug),
        rev("agent1", bug),
        rev("agent2", bug, other),
        rev("agent3", other),
        rev("agent4"),
    ]
    c = decide(reviews, 5)
    assert c.quorum == 3
    assert [(g.line, g.agents) for g in c.findings] == [(6, ["agent0", "agent1", "agent2"])]
    assert [(g.line, g.agents) for g in c.minority] == [(40, ["agent2", "agent3"])]
    c = decide(reviews[:2] + reviews[3:], 5)
    assert c.findings == [] and len(c.minority) == 2


def test_nearby_lines_are_the_same_place_far_lines_are_not():
    a = finding(line=10, end_line=11)
    near = finding(line=14, end_line=14, message="the result is wrong for most inputs")
    far = finding(line=30, end_line=30)
    groups = group_findings([rev("agent0", a), rev("agent1", near), rev("agent2", far)])
    assert sorted(len(g.agents) for g in groups) == [1, 2]


def test_same_place_different_kind_groups_only_with_similar_words():
    bug = finding()
    same_words = finding(
        kind="security", message="the mean is wrong: divides by len(xs) - 1 instead of len(xs)"
    )
    other = finding(kind="performance", message="a python loop is slow for big inputs")
    groups = group_findings([rev("agent0", bug), rev("agent1", same_words), rev("agent2", other)])
    assert sorted(g.agents for g in groups) == [["agent0", "agent1"], ["agent2"]]


def test_same_words_in_another_file_are_not_the_same_problem():
    groups = group_findings([rev("agent0", finding()), rev("agent1", finding(file="other.py"))])
    assert len(groups) == 2


def test_an_agent_repeating_itself_counts_once():
    c = decide([rev("agent0", finding(), finding(line=7, end_line=7)), rev("agent1"), rev("agent2")], 3)
    assert c.findings == [] and c.minority[0].agents == ["agent0"]


def test_unusable_answers_count_in_n_but_not_as_agreement():
    c = decide([rev("agent0", finding()), rev("agent1", error="no JSON"), rev("agent2", error="no JSON")], 3)
    assert c.quorum == 2 and c.findings == [] and len(c.minority) == 1


def test_minority_ranked_by_support_then_confidence_logprobs_first():
    lone_sure = finding(line=50, end_line=50, kind="style", message="rename x", confidence=0.9)
    lone_unsure = finding(line=80, end_line=80, kind="style", message="add a docstring", confidence=0.1)
    pair = finding(line=20, end_line=20, kind="performance", message="quadratic loop", confidence=0.2)
    reviews = [
        rev("agent0", lone_unsure, pair, logprob=-0.01),  # logprobs win over the stated 0.1
        rev("agent1", pair),
        rev("agent2", lone_sure),
        rev("agent3"),
        rev("agent4"),
    ]
    c = decide(reviews, 5)
    assert [g.line for g in c.minority] == [20, 80, 50]
    assert c.minority[1].confidence == pytest.approx(0.99, abs=0.01)


def test_group_takes_the_median_severity_and_a_suggestion():
    reviews = [
        rev("agent0", finding(severity="critical", suggestion=None)),
        rev("agent1", finding(severity="low", suggestion="    return 0", confidence=0.1)),
        rev("agent2", finding(severity="medium", suggestion=None, confidence=0.9)),
    ]
    (g,) = decide(reviews, 3).findings
    assert g.severity == "medium" and g.suggestion == "    return 0"
    assert g.agents == ["agent0", "agent1", "agent2"]


def test_similarity():
    assert similarity("the mean is wrong", "The MEAN is wrong!") == 1.0
    assert similarity("off by one", "missing docstring") == 0.0
    assert similarity("", "x") == 0.0
