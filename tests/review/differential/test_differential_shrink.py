"""A difference's input made smaller (differential.shrink): the candidates, the bounded rounds with a fake
runner, and the stage end to end (real sandbox, scripted agents): a function broken only for negative
numbers, found with a big input, ends with a small one; a difference only its own input shows keeps it."""

from __future__ import annotations

import json

from differential_helpers import finishes
from review_helpers import git, make_repo
from test_differential_stage import only, review

from memdoor.core.errors import SandboxError
from memdoor.review.differential.driver import CallOutcome
from memdoor.review.differential.execute import RECHECKS
from memdoor.review.differential.inputs import Call, make_call
from memdoor.review.differential.shrink import (
    MAX_RUNS,
    ROUNDS,
    Goal,
    candidates,
    shrink,
    simpler,
    simpler_stdin,
    size,
)
from memdoor.review.differential.stdin_inputs import stdin_call


def texts(call: Call, language: str = "python", program: bool = False) -> list[str]:
    return [c.text for c in candidates(call, language, program)]


def test_candidates_are_simpler_smaller_and_keep_the_arguments():
    assert {0, -1, -4718, -943, 9437} <= set(simpler(-9437)) and simpler(0) == []
    assert simpler(True) == [False] and simpler(None) == [] and simpler(False) == []
    assert {0.0, 2.0, 1.0} <= set(simpler(2.75)) and "" in simpler("abc") and "ab" in simpler("abc")
    assert [] in simpler([3, 4]) and [3] in simpler([3, 4]) and [0, 4] in simpler([3, 4])
    assert {} in simpler({"a": 1, "b": 2}) and {"b": 2} in simpler({"a": 1, "b": 2})
    assert {"a": 0, "b": 2} in simpler({"a": 1, "b": 2}) and () in simpler((1, 2))
    big = Call(text="[[-9437, 12, 7, 3000], 'x']")
    made = candidates(big, "python")
    assert made and all(size(c) < size(big) for c in made)  # each one smaller, the smallest first
    assert [size(c) for c in made] == sorted(size(c) for c in made)
    assert "[[-9437], 'x']" in texts(big) and "[[-9437, 12, 7, 3000], '']" in texts(big)
    assert all(len(json.loads(c.text.replace("'", '"'))) == 2 for c in made)  # as many arguments
    js = Call(text='[{"a": [1, 2.5]}, "abc"]')
    assert '[{}, "abc"]' in texts(js, "javascript") and '[{"a": [1, 2.5]}, ""]' in texts(js, "javascript")
    assert texts(Call(text="[None, False, 0]")) == []  # nothing simpler


def test_a_programs_input_loses_lines_and_a_rust_functions_is_json():
    assert set(simpler_stdin("3\n1 2 3\n")) == {"", "3\n", "1 2 3\n"}
    lines = ["['']", "['3\\n']", "['1 2 3\\n']"]
    assert texts(stdin_call("3\n1 2 3\n"), "javascript", program=True) == lines
    assert texts(stdin_call("3\n1 2 3\n"), "rust", program=True) == lines
    assert texts(Call(text="[[-9437, 12]]"), "rust")[:3] == ["[[]]", "[[12]]", "[[-9437]]"]  # JSON


def test_making_candidates_of_a_large_nested_input_finishes():
    args = [[["abcdefghij"] * 4 for _ in range(8)], {str(i): [i] * 6 for i in range(12)}]
    call = make_call(args)
    assert call is not None
    made = finishes(lambda: len(candidates(call, "python")))
    assert 0 < made <= 400


# ---------------------------------------------------------------- the rounds, with a fake runner
def ret(v: object) -> CallOutcome:
    return CallOutcome(kind="return", type=type(v).__name__, text=repr(v), digest=repr(v))


class Fake:
    """Both versions of ``f(xs) = sum(xs)``, the change's off by one where ``differs(xs)``; counts what
    ran. ``flaky``: an input's second run gives the change another value; ``fails_at``: the batch (from 0)
    that raises."""

    def __init__(self, differs=lambda xs: any(x < 0 for x in xs), flaky=False, fails_at=None):
        self.differs, self.flaky, self.fails_at = differs, flaky, fails_at
        self.batches: list[list[tuple[int, Call]]] = []
        self.seen: set[str] = set()

    async def __call__(self, calls: list[tuple[int, Call]]):
        if self.fails_at is not None and len(self.batches) >= self.fails_at:
            raise SandboxError("the sandbox failed")
        self.batches.append(calls)
        old, new = [], []
        for _, c in calls:
            (xs,) = json.loads(c.text)
            again = self.flaky and c.text in self.seen
            self.seen.add(c.text)
            old.append(ret(sum(xs)))
            new.append(ret(sum(xs) + (1 if self.differs(xs) else 0) + (1000 if again else 0)))
        return old, new


def goal(text: str, family: int = 0) -> Goal:
    def shows(o: CallOutcome, n: CallOutcome) -> bool:
        return o.key() != n.key() and (o.kind, n.kind) == ("return", "return")

    return Goal(Call(text=text), family, lambda c: candidates(c, "python"), shows)


async def test_a_difference_only_for_negative_numbers_shrinks_to_minus_one_within_the_caps():
    fake = Fake()
    (found,) = await shrink([goal("[[-9437, 12, 7, 3000, 55, 18, -2, 4]]")], fake)
    assert found is not None and found.call.text == "[[-1]]"
    assert (found.old.text, found.new.text) == ("-1", "0")
    assert len(fake.batches) <= ROUNDS + 1  # one batch a round, and one for the second run
    assert fake.batches[-1] == [(0, found.call)]  # the shrunk input ran again before it was kept
    assert sum(len(b) for b in fake.batches) <= MAX_RUNS


async def test_the_caps_hold_per_function_and_a_difference_only_its_input_shows_keeps_it():
    goals = [goal("[[9437, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]]", 0), goal("[[9437, 5, 6, 7]]", 0),
             goal("[[9437, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]", 1)]  # fmt: skip
    originals = [json.loads(g.call.text)[0] for g in goals]
    fake = Fake(differs=lambda xs: xs in originals)  # no smaller input shows it: every candidate in vain
    assert await shrink(goals, fake) == [None, None, None]
    assert len(fake.batches) <= ROUNDS
    per_function = [sum(1 for b in fake.batches for i, _ in b if goals[i].family == f) for f in (0, 1)]
    assert all(MAX_RUNS // 2 < n <= MAX_RUNS for n in per_function)  # the budget is each function's
    tight = Fake(differs=lambda xs: xs in originals)
    await shrink(goals, tight, rounds=2, max_runs=8)
    assert len(tight.batches) <= 2
    assert all(sum(1 for b in tight.batches for i, _ in b if goals[i].family == f) <= 8 for f in (0, 1))
    none = Fake(differs=lambda xs: xs in originals)  # no more runs than its second runs need: none at all
    assert await shrink(goals, none, max_runs=1) == [None, None, None] and none.batches == []


async def test_the_original_stays_when_the_shrunk_input_does_not_reproduce_or_the_sandbox_fails():
    start = "[[-9437, 12, 7, 3000]]"
    flaky = Fake(flaky=True)
    assert await shrink([goal(start)], flaky) == [None]  # the second run gives another value
    assert len(flaky.batches) >= 2 and len(flaky.batches[-1]) == 1  # it was found, then ran again
    assert await shrink([goal(start)], Fake(fails_at=1)) == [None]  # the second round fails
    assert await shrink([goal(start)], Fake(fails_at=0)) == [None]  # the first round fails
    assert await shrink([goal("[[12, 7]]")], Fake()) == [None]  # no difference to begin with


async def test_a_candidate_that_runs_out_of_time_ends_that_differences_rounds():
    class Slow(Fake):
        async def __call__(self, calls):
            old, new = await super().__call__(calls)
            return old, [CallOutcome(kind="timeout") for _ in new] if len(self.batches) == 1 else new

    slow = Slow()
    (found,) = await shrink([goal("[[-9437, 12, 7, 3000]]")], slow)
    assert found is None and len(slow.batches) == 1


# ---------------------------------------------------------------- the stage, end to end
LEVELS = '''def total(reading):
    """The sum of a reading's values."""
    return sum(reading.values())


def code(n: int):
    return n
'''
LEVELS_BROKEN = LEVELS.replace(
    "return sum(reading.values())", "return sum(v for v in reading.values() if v >= 0)"
).replace("    return n\n", "    return n + 1 if n == 9437 else n\n")
BIG = "```json\n" + json.dumps([["{'north': -9437, 'south': 12, 'east': 7, 'west': 3000}"]]) + "\n```"


class Counting:
    """The sandbox, counting the programs it runs and their tests."""

    def __init__(self, sandbox):
        self._sandbox, self.runs, self.tests, self.sizes = sandbox, 0, 0, []

    def __getattr__(self, name):
        return getattr(self._sandbox, name)

    def run(self, program, tests, **kw):
        self.runs, self.tests = self.runs + 1, self.tests + len(tests)
        self.sizes.append(len(tests))
        return self._sandbox.run(program, tests, **kw)


async def test_the_stage_reports_a_small_counterexample_and_never_loses_one(sandbox, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "levels.py").write_text(LEVELS)
    git(repo, "add", "levels.py")
    git(repo, "commit", "-qm", "levels")
    workdir = tmp_path / "work"
    workdir.mkdir()
    counting = Counting(sandbox)
    report, _ = await review(
        counting, repo, LEVELS_BROKEN, workdir, tmp_path, "refactor, no behaviour change", agents=1,
        inputs=BIG, path="levels.py",
    )  # fmt: skip
    by = {g.counterexample.function: g.counterexample for g in report.findings if g.counterexample}
    assert (by["total"].input, by["total"].old, by["total"].new) == (
        "{'north': -1}",
        "returns -1",
        "returns 0",
    )
    assert (by["code"].input, by["code"].old, by["code"].new) == ("9437", "returns 9437", "returns 9438")
    assert only(report, "total").reproduced == 1  # only the agent's big input showed it
    inputs = only(report, "total").inputs + only(report, "code").inputs
    # both versions: the inputs, twice those that differed, and the shrinking's own (one batch a round)
    assert counting.runs <= 2 * (2 + ROUNDS + 1)
    assert counting.tests <= 2 * (inputs + 2 + 2 * MAX_RUNS)
    # the shrunk input (total's; only 9437 shows code's) gives its outcomes again on as many runs as an
    # original difference that is doubted
    assert counting.sizes[-2:] == [1 + RECHECKS] * 2
