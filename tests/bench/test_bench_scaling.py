"""Scaling curves: selectors replayed on subsets of a parallel row's stored drafts (scripted models,
the real runner, sandbox and store), and the estimator itself."""

from __future__ import annotations

import io
import itertools
import math

from bench_helpers import ALL_FUNCTIONS

from memdoor.bench.analysis import analyse
from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.loop import run_bench
from memdoor.bench.progress import PlainProgress
from memdoor.bench.records import ProblemInfo, RunRecord
from memdoor.bench.scaling import EXACT_SUBSETS, Draft, ks, oracle_at, problem_curve, subsets, vote_choice
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import problems_digest
from memdoor.memory import open_memory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.problems.load import load_problems
from memdoor.run.env import RunEnv

SPEC = "scripted:mixed"
WRONG = """```python
def add(a, b):
    return a - b

def mul(a, b):
    return a + b

def neg(a):
    return 0

def sub(a, b):
    return b - a

def square(a):
    return a + a

def double(a):
    return a * 2 + 1
```"""
"""Every function wrong on some test (neg passes its public test only)."""
SAME_AS_RIGHT = ALL_FUNCTIONS.replace("return a + b", "return b + a")
"""Other code, the same behaviour as ALL_FUNCTIONS."""


def test_oracle_at_k_is_the_exact_coverage():
    assert oracle_at(4, 1, 1) == 0.25 and oracle_at(4, 1, 4) == 1.0 and oracle_at(4, 0, 2) == 0.0
    assert math.isclose(oracle_at(5, 2, 2), 1 - math.comb(3, 2) / math.comb(5, 2))


def test_subsets_are_all_of_them_when_few_and_a_fixed_sample_when_many():
    assert len(subsets(5, 2, 0)) == 10 and len(set(subsets(5, 2, 0))) == 10
    many = subsets(16, 8, 3)
    assert len(many) == EXACT_SUBSETS < math.comb(16, 8) and many == subsets(16, 8, 3)
    assert all(len(s) == 8 and list(s) == sorted(set(s)) for s in many)
    assert ks(16) == [1, 2, 4, 8, 16] and ks(5) == [1, 2, 4, 5] and ks(1) == [1]


def test_the_vote_prefers_a_majority_then_weight_and_skips_empty_drafts():
    right = Draft(agent="a", public_passed=True, tests_passed=1, group=0, logprob=-2.0, correct=True)
    wrong = Draft(agent="b", public_passed=True, tests_passed=1, group=1, logprob=-0.1, correct=False)
    failing = Draft(agent="c", public_passed=False, tests_passed=0, group=2, logprob=0.0, correct=False)
    empty = Draft(agent="d", empty=True)
    assert vote_choice([right, wrong, right]) in (0, 2)  # 2 of 3 agree: majority over weight
    assert vote_choice([right, wrong]) == 1  # k = 1: both groups are a majority; the heavier wins
    assert vote_choice([failing, right]) == 1  # public tests filter first
    assert vote_choice([empty, empty]) is None
    curve = problem_curve([right, wrong, failing, empty], 4)
    assert curve[4]["oracle"] == 1.0 and math.isclose(curve[1]["oracle"], 0.25)
    assert math.isclose(curve[1]["vote"], 0.25)  # one agent: its own draft


async def test_vote_at_n_replays_the_rows_own_choice_on_every_problem(tmp_path, problem_file, sandbox):
    answers = itertools.cycle([WRONG, ALL_FUNCTIONS, WRONG, SAME_AS_RIGHT, WRONG])
    model = ScriptedModel(
        respond=lambda _m: next(answers), spec=SPEC, logprob=[-0.3, -0.1, -0.2, -0.9, -0.05]
    )
    problems = load_problems(problem_file)
    config = BenchConfig(suite=str(problem_file), rows=parse_rows("single,parallel:3", [SPEC], []))
    record = RunRecord(config=config, problems_sha256=problems_digest(problems), problem_count=len(problems))
    pool = ModelPool()
    pool.add(SPEC, model)
    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    with ResultsStore.create_or_resume(tmp_path / "out", record, infos) as store:
        await run_bench(
            problems,
            config,
            store,
            lambda: RunEnv(pool=pool, sandbox=sandbox, memory=open_memory(None)),
            progress=PlainProgress(io.StringIO()),
        )
        analysis = analyse(store, resamples=200)
    parallel, single = analysis.row("parallel:3"), analysis.row("single")
    assert single.scaling is None and parallel.scaling is not None
    curve = parallel.scaling
    assert list(curve) == ["1", "2", "3"]
    # k = N is the one subset of all drafts: the replayed vote chose what the real selector chose
    assert curve["3"]["vote"] == parallel.pass_at_1
    assert curve["3"]["oracle"] == parallel.oracle_rate
    assert 0 < parallel.solved < parallel.total  # the drafts differed, so the vote had work to do
    for k in ("1", "2", "3"):
        assert 0.0 <= curve[k]["vote"] <= curve[k]["oracle"] <= 1.0
    assert curve["1"]["oracle"] <= curve["2"]["oracle"] <= curve["3"]["oracle"]
    doc = analysis.summary()
    assert doc["strategies"]["parallel:3"]["scaling"] == curve
    assert "scaling" not in doc["strategies"]["single"]
    assert doc["run"]["calls_made"] == len(problems) * 3
    assert doc["run"]["calls_charged"] == len(problems) * 4  # single's draft is parallel's agent 0
