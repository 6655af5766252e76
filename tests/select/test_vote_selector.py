"""The vote selector on real programs: filtering, behaviour groups, the k-of-N rule, confidence, ties."""

from __future__ import annotations

import pytest
from select_helpers import extra, functional_problem, make_runner

from memdoor.core.candidates import Candidate
from memdoor.core.errors import UsageError
from memdoor.select.vote import VoteSelector

DOUBLE = "def f(x):\n    return x * 2\n"
DOUBLE_TOO = "def f(x):\n    return x + x\n"
DOUBLE_FLOAT = "def f(x):\n    return float(x * 2)\n"
DOUBLE_SMALL = "def f(x):\n    return x * 2 if x < 10 else x * 3\n"
DOUBLE_ODD = "def f(x):\n    return x * 2 if x != 7 else 0\n"
PLUS_TWO = "def f(x):\n    return x + 2\n"  # right on f(2), wrong on f(3)
CRASH = "def f(x):\n    raise ValueError(x)\n"

PROBLEM = functional_problem("f", [("2", "4"), ("3", "6")])


def cand(code: str, agent: str, lp: float | None = None) -> Candidate:
    return Candidate(code=code, agent=agent, mean_logprob=lp)


async def test_majority_beats_a_more_confident_minority(sandbox):
    cands = [
        cand(DOUBLE, "a0", -2.0),
        cand(DOUBLE_SMALL, "a1", -0.01),
        cand(DOUBLE_TOO, "a2", -2.5),
        cand(DOUBLE_SMALL, "a3", -0.02),
        cand(DOUBLE, "a4", -1.5),
    ]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
    assert sel.reason == "majority" and sel.rule == "majority" and sel.k == 3
    assert sel.groups == [[0, 2, 4], [1, 3]]
    assert sel.index == 4  # the most confident member of the majority
    assert sel.survivors == [0, 1, 2, 3, 4]
    assert sel.confidence < 0.5  # the minority carries more confidence weight than the majority
    assert sel.public_verdict is not None and sel.public_verdict.passed


async def test_without_inputs_that_split_them_all_survivors_agree(sandbox):
    cands = [cand(DOUBLE, "a0", -2.0), cand(DOUBLE_SMALL, "a1", -0.01), cand(DOUBLE_TOO, "a2", -2.5)]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel.groups == [[0, 1, 2]]
    assert sel.reason == "majority" and sel.index == 1 and sel.confidence == pytest.approx(1.0)


async def test_a_fresh_draft_is_preferred_to_a_more_confident_rewrite_in_its_group(sandbox):
    rewrite = Candidate(code=DOUBLE_SMALL, agent="a1", round=1, mean_logprob=-0.01, rewrite=True)
    cands = [cand(DOUBLE, "a0", -2.0), rewrite, cand(DOUBLE_TOO, "a2", -1.0)]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel.groups == [[0, 1, 2]] and sel.index == 2  # the most confident of the fresh drafts
    alone = await VoteSelector().select(
        PROBLEM, [rewrite, cand(PLUS_TWO, "a0", -0.001)], make_runner(sandbox)
    )
    assert alone.index == 0  # a rewrite still wins where it has no fresh draft beside it


async def test_no_majority_confidence_decides(sandbox):
    cands = [
        cand(DOUBLE, "a0", -3.0),
        cand(DOUBLE_SMALL, "a1", -0.1),
        cand(DOUBLE_ODD, "a2", -0.05),
        cand(DOUBLE_TOO, "a3", -3.0),
        cand(DOUBLE_SMALL, "a4", -0.2),
    ]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("7", "10"))
    assert sel.groups == [[0, 3], [1, 4], [2]]
    assert sel.reason == "confidence"
    assert sel.index == 1
    weights = {int(g): w for g, w in sel.votes.items()}
    assert weights[1] == max(weights.values())
    assert sel.confidence == pytest.approx(weights[1] / sum(weights.values()), rel=1e-4)


async def test_weighting_mean_lets_one_very_confident_candidate_win(sandbox):
    cands = [cand(DOUBLE, "a0", -0.2), cand(DOUBLE_TOO, "a1", -0.2), cand(DOUBLE_SMALL, "a2", -0.01)]
    ctx = make_runner(sandbox)
    by_sum = await VoteSelector(k=3).select(PROBLEM, cands, ctx, extra_inputs=extra("10"))
    by_mean = await VoteSelector(k=3, weighting="mean").select(PROBLEM, cands, ctx, extra_inputs=extra("10"))
    assert by_sum.index == 0 and by_sum.reason == "confidence"  # sum: 2 × e^-0.2 ≈ 1.64 > e^-0.01 ≈ 0.99
    assert by_mean.index == 2 and by_mean.reason == "confidence"


async def test_ties_break_to_the_lowest_index_and_are_stable(sandbox):
    cands = [
        cand(CRASH, "a0", -0.1),
        cand(DOUBLE_SMALL, "a1", -0.5),
        cand(DOUBLE, "a2", -0.5),
        cand(DOUBLE_SMALL, "a3", -0.5),
        cand(DOUBLE_TOO, "a4", -0.5),
    ]
    picks = set()
    for _ in range(3):
        sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
        picks.add(sel.index)
        assert sel.groups == [[1, 3], [2, 4]] and sel.reason == "confidence"
    assert picks == {1}
    reordered = [cands[0], cands[2], cands[1], cands[4], cands[3]]
    sel = await VoteSelector().select(PROBLEM, reordered, make_runner(sandbox), extra_inputs=extra("10"))
    assert sel.index == 1 and reordered[1].code == DOUBLE


async def test_two_majorities_of_equal_size_and_weight_take_the_lowest_index(sandbox):
    cands = [cand(DOUBLE_SMALL, "a0"), cand(DOUBLE, "a1"), cand(DOUBLE_SMALL, "a2"), cand(DOUBLE, "a3")]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
    assert sel.k == 2 and sel.reason == "majority" and sel.index == 0


async def test_extra_inputs_split_a_group_public_tests_could_not(sandbox):
    cands = [cand(DOUBLE, "a0"), cand(DOUBLE_ODD, "a1"), cand(DOUBLE_SMALL, "a2")]
    sel_public = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel_public.groups == [[0, 1, 2]]
    sel_extra = await VoteSelector().select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("7", "10")
    )
    assert sel_extra.groups == [[0], [1], [2]]


async def test_formatting_noise_does_not_split_a_group(sandbox):
    cands = [cand(DOUBLE, "a0"), cand(DOUBLE_FLOAT, "a1")]  # 20 vs 20.0: equal under the grader's ==
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
    assert sel.groups == [[0, 1]]


async def test_failures_and_empty_code_drop_out(sandbox):
    cands = [
        cand("", "a0", -0.01),
        cand(PLUS_TWO, "a1", -0.01),
        cand(CRASH, "a2", -0.01),
        cand(DOUBLE, "a3", -3.0),
    ]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel.survivors == [3] and sel.groups == [[3]]
    assert sel.index == 3 and sel.reason == "only-one" and sel.confidence == pytest.approx(1.0)


async def test_no_survivor_falls_back_to_those_that_passed_the_most(sandbox):
    cands = [cand(CRASH, "a0", -0.01), cand(CRASH, "a1", -0.01), cand(PLUS_TWO, "a2", -3.0), cand("", "a3")]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel.reason == "no-survivor" and sel.survivors == []
    assert sel.index == 2 and sel.rule == "only-one"  # passes 1 of 2 public tests; the crashes pass none
    assert sel.public_verdict is not None and not sel.public_verdict.passed


async def test_no_survivor_among_equals_still_votes_by_behaviour(sandbox):
    wrong_a = "def f(x):\n    return 0\n"
    wrong_b = "def f(x):\n    return -1\n"
    cands = [
        cand(wrong_a, "a0", -1.0),
        cand(wrong_b, "a1", -1.0),
        cand(wrong_b + "\n# same output\n", "a2", -1.0),
    ]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel.reason == "no-survivor" and sel.rule == "majority"
    assert sel.groups == [[0], [1, 2]] and sel.index == 1


async def test_empty_candidate_list_and_all_empty_code_choose_nothing(sandbox):
    sel = await VoteSelector().select(PROBLEM, [], make_runner(sandbox))
    assert sel.index is None and sel.reason == "none" and sel.groups == []
    sel = await VoteSelector().select(PROBLEM, [cand("", "a0"), cand("  \n", "a1")], make_runner(sandbox))
    assert sel.index is None and sel.reason == "none"


async def test_candidates_without_logprobs_count_as_plain_votes(sandbox):
    cands = [cand(DOUBLE_SMALL, "a0"), cand(DOUBLE, "a1"), cand(DOUBLE_TOO, "a2"), cand(DOUBLE_ODD, "a3")]
    sel = await VoteSelector(k=3).select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("7", "10"))
    assert sel.reason == "confidence" and sel.groups == [[0], [1, 2], [3]]
    assert sel.index == 1 and sel.confidence == pytest.approx(0.5)


async def test_a_candidate_without_logprob_weighs_the_mean_of_the_others(sandbox):
    cands = [cand(DOUBLE_SMALL, "a0", -0.1), cand(DOUBLE, "a1"), cand(DOUBLE_SMALL, "a2", -3.0)]
    sel = await VoteSelector(k=3).select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
    assert sel.groups == [[0, 2], [1]]
    assert sel.votes["1"] == pytest.approx(sel.votes["0"] / 2, rel=1e-4)
    assert sel.index == 0


async def test_the_popularity_trap_is_decided_by_public_information_only(sandbox):
    """Three candidates share a bug only a hidden test reveals; they outvote the one correct candidate.

    That is the rule working as specified: the selector sees the public view and agent inputs, never
    hidden tests. Inputs that reach the bug (next test) are the defence.
    """
    problem = functional_problem("f", [("2", "4"), ("3", "6")], hidden=[("50", "100")])
    popular_bug = "def f(x):\n    return x * 2 if x < 40 else 0\n"
    cands = [cand(popular_bug, f"a{i}", -1.0) for i in range(3)] + [cand(DOUBLE, "a3", -0.01)]
    sel = await VoteSelector().select(
        problem.public_view(), cands, make_runner(sandbox), extra_inputs=extra("10")
    )
    assert (
        sel.reason == "majority" and sel.groups == [[0, 1, 2, 3]] and sel.index == 3
    )  # no split: most confident
    sel = await VoteSelector(k=2).select(
        problem.public_view(), cands, make_runner(sandbox), extra_inputs=extra("45")
    )
    assert sel.groups == [[0, 1, 2], [3]] and sel.reason == "majority" and sel.index == 0
    graded = sandbox.run(cands[sel.index].code, problem.all_tests, func_name="f")
    assert not graded.passed  # the majority's pick fails the hidden test...
    assert sandbox.run(DOUBLE, problem.all_tests, func_name="f").passed  # ...which the minority passes


def test_bad_settings_are_usage_errors():
    with pytest.raises(UsageError, match="k"):
        VoteSelector(k=0)
    with pytest.raises(UsageError, match="weighting"):
        VoteSelector(weighting="median")  # type: ignore[arg-type]
