"""What a smaller input must keep (differential.shrink, execute): the original difference's types — a
smaller input must never move a finding onto the behaviour the description asks for — and its
reproduction rule; and what making candidates may cost: none for an input longer than the stage's own,
each input's made once, every argument among them under the cap."""

from __future__ import annotations

import json
from collections import Counter
from itertools import islice

from differential_helpers import commit, finishes, review_change
from review_helpers import answer, make_repo
from test_differential_shrink import Fake, ret

from memdoor.review.differential.driver import CallOutcome
from memdoor.review.differential.execute import RECHECKS, Difference, _shows
from memdoor.review.differential.inputs import Call, make_call
from memdoor.review.differential.shrink import (
    MAX_MADE,
    ROUNDS,
    Goal,
    candidates,
    shrink,
    simpler_arguments,
)
from memdoor.review.differential.stdin_inputs import MAX_STDIN_CHARS, stdin_call

# ---------------------------------------------------------------- the types of the original difference
AVERAGE = '''def average(xs):
    """The mean of xs (0 for none)."""
    return sum(xs) / len(xs) if xs else 0
'''
AVERAGE_NEW = '''def average(xs):
    """The mean of xs (None for none)."""
    if not xs:
        return None
    ys = [x for x in xs if x >= 0]
    return sum(ys) / len(xs)
'''


def asks_only_for_none(messages) -> str:
    """An agent that writes one input, and judges intended only what the description asks: None returned."""
    user = messages[-1]["content"]
    if "Both versions will be called" in user:
        return '```json\n[["[-4, 10, 6]"]]\n```'
    if "### The pull request's description" in user:
        after = user.split("### After the change, the call:")[1].split("### Your task")[0]
        verdict = "intended" if "returns None" in after else "unintended"
        return f'```json\n{{"verdict": "{verdict}"}}\n```'
    return answer()


async def test_a_smaller_input_does_not_move_a_finding_onto_the_asked_for_behaviour(sandbox, tmp_path):
    """The change asks for None on an empty list and also drops negative values: the empty list (0 to
    None) is not the same difference as [-4, 10, 6] (4.0 to 5.33), so neither the smallest input of the
    group nor the shrunk one turns the bug into the asked-for behaviour."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, "stats.py", AVERAGE)
    description = "average() now returns None for an empty list"
    report, _ = await review_change(
        sandbox, repo, "stats.py", AVERAGE_NEW, tmp_path, asks_only_for_none, description
    )
    (g,) = report.findings
    ce = g.counterexample
    assert ce is not None and (ce.function, ce.input, ce.old, ce.new) == (
        "average",
        "[-1]",
        "returns -1.0",
        "returns 0.0",
    )
    assert [d.new.show() for d in report.observed_behaviour] == ["returns None"]


def test_a_candidate_with_other_types_or_other_differing_parts_does_not_show_the_difference():
    d = Difference(function="f", file="a.py", line=1, end_line=1, input=Call(text="[[-4, 10, 6]]"),
                   old=ret(4.0), new=ret(5.5))  # fmt: skip
    shows = _shows(d)
    assert shows(ret(-1.0), ret(0.0)) and not shows(ret(0), ret(None)) and not shows(ret(1.0), ret(1.0))
    moved = CallOutcome(
        kind="return", type="float", text="1.0", digest="1.0", mutated="[]", mutated_digest="x"
    )
    assert not shows(ret(1.0), moved) and not shows(ret(0.5), moved)  # the arguments left behind differ
    program = d.model_copy(update={"old": exited("1\n", 0), "new": exited("2\n", 0)})
    assert _shows(program)(exited("", 0), exited("x", 0))
    assert not _shows(program)(exited("", 0), exited("", 1))  # another exit status


def exited(out: str, status: int) -> CallOutcome:
    return CallOutcome(kind="exit", type=f"exit status {status}", text=out, digest=out)


# ---------------------------------------------------------------- the reproduction rule
async def test_a_smaller_input_random_only_when_small_must_give_its_outcomes_on_every_rerun():
    """sum(xs) changed for negative numbers; on fewer than two numbers the change returns a coin toss,
    which came up the same on its first two runs by chance: the original input stays."""
    runs: Counter[str] = Counter()

    async def run(calls: list[tuple[int, Call]]):
        old, new = [], []
        for _, c in calls:
            (xs,) = json.loads(c.text)
            toss = 1 if runs[c.text] < 2 else runs[c.text] % 2
            runs[c.text] += 1
            old.append(ret(sum(xs)))
            new.append(ret(sum(xs) + (toss if len(xs) < 2 else any(x < 0 for x in xs))))
        return old, new

    def goal() -> Goal:
        return Goal(Call(text="[[-9437, 12, 7, 3000]]"), 0, lambda c: candidates(c, "python"), showing)

    (fooled,) = await shrink([goal()], run)  # one more run agrees by chance
    assert fooled is not None and fooled.call.text == "[[]]"
    runs.clear()
    assert await shrink([goal()], run, again=1 + RECHECKS) == [None]  # as the stage shrinks


def showing(o: CallOutcome, n: CallOutcome) -> bool:
    return o.key() != n.key() and (o.kind, o.type, n.kind, n.type) == ("return", "int", "return", "int")


# ---------------------------------------------------------------- the cost of candidates
def test_an_input_longer_than_the_stage_s_own_has_no_candidates():
    big = [list(range(100_000))]
    assert finishes(lambda: candidates(Call(text=repr(big)), "python")) == []
    assert finishes(lambda: candidates(Call(text=json.dumps(big)), "javascript")) == []
    lines = stdin_call("1\n" * (MAX_STDIN_CHARS // 2 + 1))
    assert finishes(lambda: candidates(lines, "python", program=True)) == []
    assert candidates(stdin_call("1\n" * (MAX_STDIN_CHARS // 2)), "python", program=True)  # at the cap
    at_cap = make_call([list(range(200, 399))])
    assert at_cap is not None and len(at_cap.text) > 900 and candidates(at_cap, "python")


async def test_an_input_s_candidates_are_made_once_over_the_rounds():
    made: list[str] = []

    def counted(c: Call) -> list[Call]:
        made.append(c.text)
        return candidates(c, "python")

    start = "[[9437, 11, 12, 13, 14, 15, 16, 17]]"
    fake = Fake(differs=lambda xs: xs == json.loads(start)[0])  # no smaller input shows it
    assert await shrink([Goal(Call(text=start), 0, counted, showing)], fake) == [None]
    assert len(fake.batches) == ROUNDS and made == [start]
    made.clear()
    (found,) = await shrink(
        [Goal(Call(text="[[-9437, 12, 7, 3000, 55, 18, -2, 4]]"), 0, counted, showing)], Fake()
    )
    assert found is not None and len(made) == len(set(made))  # once per input that became the current one


def test_the_cap_on_candidates_made_leaves_no_argument_out():
    nested, word = [[1, 2, 3, 4, 5, 6, 7, 8] for _ in range(16)], "abc"
    made = list(islice(simpler_arguments([nested, word, -7]), MAX_MADE))
    assert any(a[1] != word for a in made) and any(a[2] != -7 for a in made)
    texts = {c.text for c in candidates(Call(text=repr([nested, word, -7])), "python")}
    assert repr([nested, word, 0]) in texts and repr([nested, "", -7]) in texts
