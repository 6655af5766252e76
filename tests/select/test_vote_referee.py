"""The referee (S*'s judged comparison): a vote without a majority between the two leading behaviour
groups is settled on the first input where their outputs differ; a majority never asks."""

from __future__ import annotations

from select_helpers import extra, functional_problem, make_runner

from memdoor.core.candidates import Candidate
from memdoor.select.vote import VoteSelector

PROBLEM = functional_problem("f", [("2", "4")])
DOUBLE = "def f(x):\n    return x * 2\n"
SQUARE = "def f(x):\n    return x * x\n"  # agrees with DOUBLE on 2, not on 3
CRASH = "def f(x):\n    if x == 3:\n        raise ValueError\n    return 4\n"


class Referee:
    """Says the output equal to ``right`` is right; records what it was shown."""

    def __init__(self, right: str | None):
        self.right = right
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    async def which(self, problem, test, outputs):
        self.asked.append((test.input, tuple(outputs)))
        return outputs.index(self.right) if self.right in outputs else None


async def test_a_split_vote_goes_to_the_group_the_referee_finds_right(sandbox):
    # Three groups of one (no group reaches k = 2 of 3): SQUARE leads on confidence, DOUBLE is second.
    cands = [
        Candidate(code=SQUARE, agent="a0", mean_logprob=-0.1),
        Candidate(code=DOUBLE, agent="a1", mean_logprob=-0.5),
        Candidate(code="def f(x):\n    return x + 2\n", agent="a2", mean_logprob=-0.9),
    ]
    referee = Referee(right="6")
    sel = await VoteSelector().select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=referee
    )
    assert referee.asked == [("3", ("9", "6"))], "leader first, on the input where they differ"
    assert sel.rule == "referee" and cands[sel.index].code == DOUBLE
    assert sel.duel is not None and sel.duel.winner == 1 and sel.duel.input == "3"
    # Without a referee the most confident group wins.
    plain = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"))
    assert plain.rule == "confidence" and cands[plain.index].code == SQUARE and plain.duel is None


async def test_a_referee_that_cannot_tell_leaves_the_vote_as_it_was(sandbox):
    cands = [
        Candidate(code=SQUARE, agent="a0", mean_logprob=-0.1),
        Candidate(code=DOUBLE, agent="a1", mean_logprob=-0.5),
    ]
    referee = Referee(right=None)
    sel = await VoteSelector(k=2).select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=referee
    )
    assert len(referee.asked) == 1 and sel.rule == "confidence" and cands[sel.index].code == SQUARE
    assert sel.duel is not None and sel.duel.winner is None


async def test_a_majority_never_asks_the_referee(sandbox):
    cands = [Candidate(code=DOUBLE, agent=f"a{i}") for i in range(2)] + [Candidate(code=SQUARE, agent="a2")]
    referee = Referee(right="9")
    sel = await VoteSelector().select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=referee
    )
    assert referee.asked == [] and sel.rule == "majority"


async def test_an_input_where_one_side_crashed_is_not_judged(sandbox):
    cands = [
        Candidate(code=CRASH, agent="a0", mean_logprob=-0.1),
        Candidate(code=DOUBLE, agent="a1", mean_logprob=-0.5),
    ]
    referee = Referee(right="4")
    sel = await VoteSelector(k=2).select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=referee
    )
    assert referee.asked == [] and sel.duel is None and sel.rule == "confidence"


async def test_a_tie_is_no_majority_and_goes_to_the_referee(sandbox):
    """2 against 2 of 4 reaches k = 2 on both sides, yet neither side is a majority: the referee decides."""
    cands = [Candidate(code=SQUARE, agent=f"a{i}", mean_logprob=-0.1) for i in range(2)] + [
        Candidate(code=DOUBLE, agent=f"a{i}", mean_logprob=-0.5) for i in range(2, 4)
    ]
    referee = Referee(right="6")
    sel = await VoteSelector().select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=referee
    )
    assert len(referee.asked) == 1 and sel.rule == "referee" and cands[sel.index].code == DOUBLE


def test_only_a_whole_verdict_line_counts():
    from memdoor.strategies.messages import parse_referee

    assert parse_referee("Work: 3*2=6.\nANSWER: B") == 1
    assert parse_referee("**ANSWER: A**") == 0 and parse_referee("ANSWER: neither") is None
    # the prompt calls the outputs "Answer A" / "Answer B": reasoning that names them is not a verdict
    assert parse_referee("Answer B prints 7, which is wrong; answer A gives") is None
    assert parse_referee("ANSWER: A\nOn reflection, Answer B is what the code returns") == 0


def test_a_verdict_may_be_boxed_or_name_the_value_itself():
    """What the 1.5B wrote on HumanEval/119 and in earlier runs: a boxed letter, or the output's value."""
    from memdoor.strategies.messages import parse_referee

    assert parse_referee("Work.\n\\boxed{ANSWER: B}") == 1 and parse_referee("ANSWER: \\boxed{A}") == 0
    assert parse_referee("Therefore, the correct answer is:\nANSWER: Yes", ["'No'", "'Yes'"]) == 1
    assert parse_referee("ANSWER: **7**", ["7", "12"]) == 0
    # a value that is neither output, or both, names nothing; nor does a value without the outputs
    assert parse_referee("ANSWER: 9", ["7", "12"]) is None
    assert parse_referee("ANSWER: 7", ["7", " 7 "]) is None
    assert parse_referee("ANSWER: Yes") is None
    # a letter is a letter, even where an output is spelt the same; a line that says more names nothing
    assert parse_referee("ANSWER: B", ["B", "A"]) == 1
    assert parse_referee("ANSWER: A is wrong, B is right") is None


async def test_with_duel_split_a_majority_that_splits_is_judged_too(sandbox):
    """2 SQUARE against 1 DOUBLE is a majority: "contested" keeps it, "split" asks the referee (S*)."""
    cands = [Candidate(code=SQUARE, agent=f"a{i}") for i in range(2)] + [Candidate(code=DOUBLE, agent="a2")]
    referee = Referee(right="6")
    sel = await VoteSelector().select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=referee, duel="split"
    )
    assert referee.asked == [("3", ("9", "6"))] and sel.rule == "referee" and cands[sel.index].code == DOUBLE
    # A referee that cannot tell leaves the majority standing.
    unsure = await VoteSelector().select(
        PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("3"), referee=Referee(None), duel="split"
    )
    assert unsure.rule == "majority" and cands[unsure.index].code == SQUARE
    # One behaviour among the survivors is nothing to judge.
    same = [Candidate(code=DOUBLE, agent=f"a{i}") for i in range(3)]
    alone = Referee(right="6")
    one = await VoteSelector().select(
        PROBLEM, same, make_runner(sandbox), extra_inputs=extra("3"), referee=alone, duel="split"
    )
    assert alone.asked == [] and one.duel is None
