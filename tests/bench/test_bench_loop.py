"""The bench loop with the real runner, the real sandbox and scripted models (control flow only)."""

from __future__ import annotations

import io
import json

import pytest
from bench_helpers import ALL_FUNCTIONS, EXPECTED_SOLVED

from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.loop import MAX_AUTO_ATTEMPTS, BenchAborted, BenchOptions, run_bench
from memdoor.bench.progress import PlainProgress
from memdoor.bench.records import ProblemInfo, RunRecord
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import problems_digest
from memdoor.core.errors import ModelUnavailable, SandboxError
from memdoor.memory import open_memory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.problems.load import load_problems
from memdoor.run.env import RunEnv

GOOD = "scripted:good"
DOWN = "scripted:down"


def setup(tmp_path, problem_file, sandbox, strategies="single,parallel:3", model=GOOD, baselines=()):
    problems = load_problems(problem_file)
    config = BenchConfig(suite=str(problem_file), rows=parse_rows(strategies, [model], list(baselines)))
    run = RunRecord(config=config, problems_sha256=problems_digest(problems), problem_count=len(problems))
    pool = ModelPool()
    pool.add(GOOD, ScriptedModel([ALL_FUNCTIONS], spec=GOOD))
    pool.add(DOWN, ScriptedModel([ModelUnavailable("endpoint down")], spec=DOWN))

    def make_env() -> RunEnv:
        return RunEnv(pool=pool, sandbox=sandbox, memory=open_memory(None))

    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    return problems, config, run, infos, make_env


async def bench(tmp_path, problems, config, run, infos, make_env, **options):
    out = io.StringIO()
    with ResultsStore.create_or_resume(tmp_path / "out", run, infos) as store:
        outcome = await run_bench(
            problems, config, store, make_env, options=BenchOptions(**options), progress=PlainProgress(out)
        )
        results = store.results(full=True)
    return outcome, results, out.getvalue()


async def test_every_pair_is_stored_once_with_its_grading_cost_and_trace(tmp_path, problem_file, sandbox):
    args = setup(tmp_path, problem_file, sandbox)
    outcome, results, log = await bench(tmp_path, *args)
    assert (outcome.ran, outcome.skipped, outcome.errors) == (12, 0, 0)
    assert [(r.problem_id, r.row) for r in results] == [
        (p, row) for p in ("add", "mul", "neg", "sub", "square", "double") for row in ("single", "parallel:3")
    ]
    solved = {r.problem_id for r in results if r.passed}
    assert solved == EXPECTED_SOLVED
    neg = next(r for r in results if r.problem_id == "neg" and r.row == "single")
    assert neg.verdict_status == "wrong_answer" and neg.oracle is False
    for r in results:
        assert r.status == "done" and r.code.startswith("def add")
        assert r.calls >= (3 if r.row == "parallel:3" else 1) and r.tokens > 0
        assert r.usd is None  # scripted models are unpriced
        trace = json.loads(r.trace_json)
        assert trace["trace"]["id"] == r.trace_id and trace["trace"]["events"]
        assert json.loads(r.ledger_json)["calls"] and json.loads(r.verdict_json)["status"] == r.verdict_status
        assert r.started_at <= r.finished_at
    assert log.count("\n") == 13 and "[12/12" in log and "single 5/6" in log

    # Rerunning the same thing does nothing: every pair is stored.
    outcome, again, _ = await bench(tmp_path, *args)
    assert (outcome.ran, outcome.skipped) == (0, 12)
    assert [r.trace_id for r in again] == [r.trace_id for r in results]


async def test_concurrency_gives_the_same_results(tmp_path, problem_file, sandbox):
    args = setup(tmp_path, problem_file, sandbox, strategies="single,sequential:2")
    _, serial, _ = await bench(tmp_path / "a", *args)
    _, concurrent, _ = await bench(tmp_path / "b", *args, concurrency=4)
    key = lambda rs: sorted((r.problem_id, r.row, r.passed, r.code) for r in rs)  # noqa: E731
    assert key(serial) == key(concurrent) and len(serial) == 12


async def test_an_endpoint_that_is_down_stops_the_run_and_its_errors_are_retried_on_resume(
    tmp_path, problem_file, sandbox
):
    args = setup(tmp_path, problem_file, sandbox, strategies="single", model=DOWN)
    with pytest.raises(BenchAborted, match="3 environmental errors in a row"):
        await bench(tmp_path, *args, max_consecutive_errors=3)
    with ResultsStore.open(tmp_path / "out") as store:
        stored = store.results()
    assert len(stored) == 3
    assert all(r.status == "error" and r.retryable and not r.passed and r.attempts == 1 for r in stored)
    assert all(r.calls > 0 and r.failed_calls == r.calls for r in stored)

    # Resume: the 3 errors are retried (attempt 2) and the 3 others run; errors again, all stored.
    outcome, results, _ = await bench(tmp_path, *args, max_consecutive_errors=100)
    assert (outcome.ran, outcome.errors) == (6, 6)
    assert sorted(r.attempts for r in results) == [1, 1, 1, 2, 2, 2]
    # Environmental errors are retried until MAX_AUTO_ATTEMPTS, then left alone.
    for _ in range(MAX_AUTO_ATTEMPTS + 1):
        await bench(tmp_path, *args, max_consecutive_errors=100)
    _, results, _ = await bench(tmp_path, *args, max_consecutive_errors=100)
    assert {r.attempts for r in results} == {MAX_AUTO_ATTEMPTS} and len(results) == 6


async def test_a_deterministic_error_is_kept_and_only_retried_on_request(tmp_path, problem_file, sandbox):
    problems, config, run, infos, make_env = setup(tmp_path, problem_file, sandbox, strategies="single")
    calls = []

    async def broken_solve(problem, solve_config, env):  # a stand-in that raises a non-environmental error
        calls.append(problem.id)
        raise ValueError(f"cannot handle {problem.id}")

    async def once(**options):
        with ResultsStore.create_or_resume(tmp_path / "out", run, infos) as store:
            await run_bench(
                problems,
                config,
                store,
                make_env,
                options=BenchOptions(**options),
                progress=PlainProgress(io.StringIO()),
                solve=broken_solve,
            )
            return store.results()

    results = await once()
    assert len(calls) == 6
    assert all(r.status == "error" and not r.retryable for r in results)
    assert (
        results[0].error == "ValueError: cannot handle add" and results[0].error_type == "builtins.ValueError"
    )
    await once()
    assert len(calls) == 6  # not looped on
    results = await once(retry_errors=True)
    assert len(calls) == 12 and {r.attempts for r in results} == {2}


class FailsOnceWhileGrading:
    """The real sandbox, except that the first grading run (public + hidden tests) raises SandboxError."""

    def __init__(self, sandbox, graded_tests: int):
        self._sandbox, self._graded_tests = sandbox, graded_tests
        self.name = sandbox.name
        self.failed = 0

    def run(self, code, tests, **kw):
        if len(tests) == self._graded_tests and not self.failed:
            self.failed += 1
            raise SandboxError("the isolation tool broke")
        return self._sandbox.run(code, tests, **kw)


async def test_a_sandbox_error_while_grading_is_stored_with_its_type_and_retried(
    tmp_path, problem_file, sandbox
):
    problems, config, run, infos, _ = setup(tmp_path, problem_file, sandbox, strategies="single")
    problems, infos = problems[:1], infos[:1]  # add: 1 public test, graded on 3
    run = run.model_copy(update={"problems_sha256": problems_digest(problems), "problem_count": 1})
    flaky = FailsOnceWhileGrading(sandbox, graded_tests=3)
    pool = ModelPool()
    pool.add(GOOD, ScriptedModel([ALL_FUNCTIONS], spec=GOOD))

    def make_env() -> RunEnv:
        return RunEnv(pool=pool, sandbox=flaky, memory=open_memory(None))

    _, results, _ = await bench(tmp_path, problems, config, run, infos, make_env)
    assert flaky.failed == 1
    (first,) = results
    assert first.status == "error" and first.retryable and first.attempts == 1
    assert first.error_type == "memdoor.core.errors.SandboxError" and first.calls == 1

    # Resume: the environmental error is retried, and this time the run is graded.
    outcome, results, _ = await bench(tmp_path, problems, config, run, infos, make_env)
    (second,) = results
    assert outcome.ran == 1 and second.status == "done" and second.passed and second.attempts == 2
    assert second.error_type is None and second.tests_total == 3
