"""How many sandbox runs the vote selector makes (counted around the real sandbox): identical code once,
known verdicts reused."""

from __future__ import annotations

from select_helpers import Counting, extra, functional_problem, make_runner

from memdoor.core.candidates import Candidate
from memdoor.select.vote import VoteSelector

PROBLEM = functional_problem("f", [("2", "4"), ("3", "6")])
DOUBLE = "def f(x):\n    return x * 2\n"
SMALL = "def f(x):\n    return x * 2 if x < 10 else 0\n"


async def test_identical_code_runs_once(sandbox):
    sandbox = Counting(sandbox)
    cands = [
        Candidate(code=c, agent=f"a{i}") for i, c in enumerate([DOUBLE, SMALL, DOUBLE, "\n" + DOUBLE, SMALL])
    ]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
    assert sel.groups == [[0, 2, 3], [1, 4]]
    assert sorted(sandbox.programs) == sorted([(DOUBLE, 2), (SMALL, 2), (DOUBLE, 1), (SMALL, 1)])


async def test_known_public_verdicts_are_reused(sandbox):
    verdict = sandbox.run(DOUBLE, PROBLEM.public_tests, func_name="f")
    sandbox = Counting(sandbox)
    cands = [Candidate(code=DOUBLE, agent="a0", public=verdict), Candidate(code=DOUBLE, agent="a1")]
    sel = await VoteSelector().select(PROBLEM, cands, make_runner(sandbox))
    assert sel.index == 0 and sandbox.programs == []


async def test_a_single_surviving_behaviour_skips_the_extra_inputs(sandbox):
    sandbox = Counting(sandbox)
    cands = [Candidate(code=DOUBLE, agent="a0"), Candidate(code=DOUBLE, agent="a1")]
    await VoteSelector().select(PROBLEM, cands, make_runner(sandbox), extra_inputs=extra("10"))
    assert sandbox.programs == [(DOUBLE, 2)]
