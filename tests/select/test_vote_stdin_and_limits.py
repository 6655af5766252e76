"""The vote selector on stdin programs, on candidates that hang, without public tests, and concurrently."""

from __future__ import annotations

import threading

from select_helpers import Counting, extra, functional_problem, make_runner

from memdoor.core.candidates import Candidate
from memdoor.core.problem import Problem, TestCase
from memdoor.select.vote import VoteSelector

STDIN = Problem(
    id="double-stdin",
    statement="Read n and print 2n.",
    public_tests=[
        TestCase(kind="stdin", input="2\n", output="4\n"),
        TestCase(kind="stdin", input="3\n", output="6\n"),
    ],
)
PLAIN = "n = int(input())\nprint(2 * n)\n"
AS_FLOAT = "n = int(input())\nprint(f'{2 * n}.0')\n"
PADDED = "import sys\nn = int(sys.stdin.read())\nsys.stdout.write(str(n + n) + '   \\n\\n')\n"
SMALL_ONLY = "n = int(input())\nprint(2 * n if n < 100 else -1)\n"
HANGS_ON_BIG = "n = int(input())\nwhile n >= 100:\n    pass\nprint(2 * n)\n"


def cand(code: str, agent: str, lp: float | None = None) -> Candidate:
    return Candidate(code=code, agent=agent, mean_logprob=lp)


async def test_stdin_formatting_noise_does_not_split_but_real_differences_do(sandbox):
    cands = [
        cand(PLAIN, "a0", -1.0),
        cand(AS_FLOAT, "a1", -1.0),
        cand(PADDED, "a2", -1.0),
        cand(SMALL_ONLY, "a3", -0.01),
    ]
    sel = await VoteSelector().select(
        STDIN, cands, make_runner(sandbox), extra_inputs=extra("5\n", "1000\n", kind="stdin")
    )
    assert sel.survivors == [0, 1, 2, 3]
    assert sel.groups == [[0, 1, 2], [3]]
    assert sel.reason == "majority" and sel.index == 0


async def test_a_candidate_that_hangs_drops_out_or_forms_its_own_group(quick_sandbox):
    forever = "while True:\n    pass\n"
    cands = [cand(forever, "a0", -0.01), cand(PLAIN, "a1", -2.0), cand(HANGS_ON_BIG, "a2", -0.5)]
    sel = await VoteSelector(k=3).select(
        STDIN, cands, make_runner(quick_sandbox), extra_inputs=extra("1000\n", kind="stdin")
    )
    assert sel.survivors == [1, 2]  # the endless loop fails the public tests (time limit)
    assert sel.groups == [[1], [2]]  # on the big input one answers and the other runs out of time
    assert sel.reason == "confidence" and sel.index == 2  # confidence alone decides here: by rule


async def test_without_public_tests_agent_inputs_decide_and_broken_code_drops_out(sandbox):
    problem = Problem(id="seed", statement="Write is_palindrome(s).", func_name="is_palindrome")
    good = "def is_palindrome(s):\n    return s == s[::-1]\n"
    good_too = "def is_palindrome(s):\n    return all(s[i] == s[-1 - i] for i in range(len(s) // 2))\n"
    folded = "def is_palindrome(s):\n    t = s.casefold()\n    return t == t[::-1]\n"
    broken = "def is_palindrome(s)\n    return True\n"
    cands = [cand(broken, "a0", -0.01), cand(good, "a1"), cand(folded, "a2"), cand(good_too, "a3")]
    inputs = extra('"abba"', '"Abba"', '"été"', '""')
    sel = await VoteSelector().select(problem, cands, make_runner(sandbox), extra_inputs=inputs)
    assert sel.survivors == [1, 2, 3]
    assert sel.groups == [[1, 3], [2]]
    assert sel.reason == "majority" and sel.index == 1
    assert sel.public_verdict is None


class Rendezvous:
    """Lets the first two runs through only together: a sequential selector would never get past it."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name
        self.barrier = threading.Barrier(2, timeout=120)
        self.met = False
        self.lock = threading.Lock()
        self.calls = 0

    def run(self, code, tests, **kw):
        with self.lock:
            self.calls += 1
            first_two = self.calls <= 2
        if first_two:
            self.barrier.wait()
            self.met = True
        return self.inner.run(code, tests, **kw)


async def test_candidates_run_concurrently(sandbox):
    meeting = Rendezvous(sandbox)
    counting = Counting(meeting)
    problem = functional_problem("f", [("2", "4")])
    cands = [cand(f"def f(x):\n    return x * 2  # {i}\n", f"a{i}") for i in range(3)]
    sel = await VoteSelector().select(problem, cands, make_runner(counting))
    assert meeting.met and sel.groups == [[0, 1, 2]]
    assert len(counting.programs) == 3
