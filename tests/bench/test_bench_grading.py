"""One grading stage: in a bench, each distinct program of a run is run on the grading tests at most once
(the answer, the oracle and the report's draft records share the verdicts), with the real runner, the real
sandbox (counted) and a scripted model."""

from __future__ import annotations

import io
import json
import threading
from collections import Counter

from bench_helpers import ALL_FUNCTIONS

from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.loop import run_bench
from memdoor.bench.progress import PlainProgress
from memdoor.bench.records import ProblemInfo, RunRecord
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import problems_digest
from memdoor.memory import open_memory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.problems.load import load_problems
from memdoor.run.env import RunEnv

SPEC = "scripted:twins"
OTHER_NEG = ALL_FUNCTIONS.replace("return a  # wrong unless", "return a * 1  # also wrong unless")
"""Other code: right where ALL_FUNCTIONS is right, and ``neg`` wrong in the same way."""


class CountingSandbox:
    """The real sandbox, counting each program run on a problem's grading tests (public + hidden)."""

    def __init__(self, inner, grading_sizes: dict[str, int]):
        self.inner = inner
        self.name = inner.name
        self.grading_sizes = grading_sizes
        self.graded: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def run(self, code, tests, *, func_name=None, **options):
        if len(tests) == self.grading_sizes[func_name]:  # every problem has hidden tests: longer than public
            with self.lock:
                self.graded[(func_name, code)] += 1
        return self.inner.run(code, tests, func_name=func_name, **options)

    def __getattr__(self, name):
        return getattr(self.inner, name)


async def test_each_distinct_draft_is_graded_once_per_problem_and_row(tmp_path, problem_file, sandbox):
    problems = load_problems(problem_file)
    counting = CountingSandbox(sandbox, {p.func_name: len(p.grading_tests) for p in problems})
    config = BenchConfig(suite=str(problem_file), rows=parse_rows("parallel:3", [SPEC], []))
    record = RunRecord(config=config, problems_sha256=problems_digest(problems), problem_count=len(problems))
    pool = ModelPool()
    pool.add(SPEC, ScriptedModel([ALL_FUNCTIONS, ALL_FUNCTIONS, OTHER_NEG], spec=SPEC))  # 2 twins, 1 other
    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    env = lambda: RunEnv(pool=pool, sandbox=counting, memory=open_memory(None))  # noqa: E731
    with ResultsStore.create_or_resume(tmp_path / "out", record, infos) as store:  # one pair at a time
        await run_bench(problems, config, store, env, progress=PlainProgress(io.StringIO()))
        results = {r.problem_id: r for r in store.results(full=True)}
    assert len(results) == len(problems) and all(r.status == "done" for r in results.values())
    for p in problems:
        r = results[p.id]
        codes = [c["code"] for c in json.loads(r.solution_json)["candidates"]]
        assert sorted(Counter(codes).values()) == [1, 2], "two identical drafts and another"
        graded = {code: n for (f, code), n in counting.graded.items() if f == p.func_name}
        assert graded and max(graded.values()) == 1, (p.id, sorted(graded.values()))
        # every distinct draft has its grading in the report's draft records, the twins alike
        drafts = json.loads(r.drafts)
        assert len(graded) == 2 and len(drafts) == 3
        assert [d["correct"] for d in drafts] == [p.id != "neg"] * 3
    # neg: the answer fails its hidden test, so the oracle grades the other draft, and the draft records
    # reuse that verdict instead of running it again
    neg = results["neg"]
    assert neg.passed is False and neg.oracle is False
