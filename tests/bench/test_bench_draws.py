"""Paired draws: one bench run computes an identical model request once and replays it to every row
(scripted models for control flow; the real runner, sandbox and SQLite store)."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import sqlite3
import time
from collections import Counter

from bench_helpers import ALL_FUNCTIONS

from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.draws import Draws, PairedModel
from memdoor.bench.loop import BenchOptions, run_bench
from memdoor.bench.progress import PlainProgress
from memdoor.bench.records import ProblemInfo, RunRecord
from memdoor.bench.store import DB_NAME, ResultsStore
from memdoor.bench.suite import problems_digest
from memdoor.memory import open_memory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.problems.load import load_problems
from memdoor.run.env import RunEnv

SPEC = "scripted:numbered"


def numbered_model(delay: float = 0.0) -> ScriptedModel:
    """Every call answers with a different draw number inside the code, so drafts can be told apart."""
    counter = itertools.count()
    return ScriptedModel(
        respond=lambda _m: ALL_FUNCTIONS.replace("```python\n", f"```python\n# draw {next(counter)}\n"),
        spec=SPEC,
        delay=delay,
    )


async def run(tmp_path, problem_file, sandbox, model, strategies="single,parallel:3", concurrency=1):
    problems = load_problems(problem_file)
    config = BenchConfig(suite=str(problem_file), rows=parse_rows(strategies, [SPEC], []))
    record = RunRecord(config=config, problems_sha256=problems_digest(problems), problem_count=len(problems))
    pool = ModelPool()
    pool.add(SPEC, model)
    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    with ResultsStore.create_or_resume(tmp_path / "out", record, infos) as store:
        draws = Draws(store.calls(), store.save_call)
        await run_bench(
            problems,
            config,
            store,
            lambda: RunEnv(pool=pool, sandbox=sandbox, memory=open_memory(None)),
            options=BenchOptions(concurrency=concurrency),
            progress=PlainProgress(io.StringIO()),
            draws=draws,
        )
        results = store.results(full=True)
        assert all(r.status == "done" for r in results), [r.error for r in results if r.error]
        return results, draws, len(store.calls())


def agent0_draft(result) -> str:
    solution = json.loads(result.solution_json)
    return next(c["code"] for c in solution["candidates"] if c["agent"] == "agent0" and c["round"] == 0)


async def test_single_is_agent_0s_first_draft_and_shared_calls_are_computed_once(
    tmp_path, problem_file, sandbox
):
    model = numbered_model()
    results, draws, kept = await run(tmp_path, problem_file, sandbox, model)
    by = {(r.problem_id, r.row): r for r in results}
    problems = sorted({r.problem_id for r in results})
    assert len(problems) == 6
    for p in problems:
        single, parallel = by[(p, "single")], by[(p, "parallel:3")]
        assert single.code == agent0_draft(parallel)
        assert single.code == agent0_draft(single)
        assert single.calls == 1 and parallel.calls == 3  # each row charged every call it made
        assert single.prompt_tokens > 0 and single.completion_tokens > 0
    # 6 problems × 3 agents computed; single's 6 calls were parallel's agent-0 calls, replayed.
    assert len(model.calls) == 18 == kept == draws.computed
    assert draws.replayed == 6
    # agents 1 and 2 drew other answers than agent 0
    drafts = json.loads(by[("add", "parallel:3")].solution_json)["candidates"]
    assert len({c["code"] for c in drafts}) == 3


async def test_a_resumed_run_replays_the_stored_calls(tmp_path, problem_file, sandbox):
    first, _, _ = await run(tmp_path, problem_file, sandbox, numbered_model())
    with sqlite3.connect(tmp_path / "out" / DB_NAME) as conn:  # as if the run had died before storing
        conn.execute("DELETE FROM results")
    model = numbered_model()
    again, draws, kept = await run(tmp_path, problem_file, sandbox, model)
    assert model.calls == [] and draws.computed == 0 and kept == 18
    assert [(r.problem_id, r.row, r.code, r.tokens) for r in again] == [
        (r.problem_id, r.row, r.code, r.tokens) for r in first
    ]


async def test_rows_asking_at_once_wait_for_the_one_call_in_flight():
    model = numbered_model(delay=0.2)
    draws = Draws()
    messages = [{"role": "user", "content": "write add"}]
    rows = [PairedModel(model, SPEC, draws, Counter()) for _ in range(4)]  # four runs, one request
    answers = await asyncio.gather(*(m.complete(messages, seed=7, temperature=0.2) for m in rows))
    assert len(model.calls) == 1
    assert len({a.completions[0].text for a in answers}) == 1
    assert all(a.usage.prompt_tokens == answers[0].usage.prompt_tokens > 0 for a in answers)
    # a second identical request within one run is a draw of its own (repeat index 1)
    again = await rows[0].complete(messages, seed=7, temperature=0.2)
    assert len(model.calls) == 2 and again.completions[0].text != answers[0].completions[0].text
    # another seed is another draw
    await rows[1].complete(messages, seed=8, temperature=0.2)
    assert len(model.calls) == 3


async def test_a_paced_replay_takes_the_recorded_latency_of_the_call():
    model = numbered_model(delay=0.3)
    draws = Draws(pace=True)
    messages = [{"role": "user", "content": "write add"}]
    first = await PairedModel(model, SPEC, draws, Counter()).complete(messages, seed=1)
    started = time.monotonic()
    again = await PairedModel(model, SPEC, draws, Counter()).complete(messages, seed=1)
    assert time.monotonic() - started >= 0.3 == again.usage.latency_s == first.usage.latency_s
    assert len(model.calls) == 1 and draws.replayed == 1


async def test_rows_of_a_concurrent_bench_share_the_draws_they_make_at_the_same_time(
    tmp_path, problem_file, sandbox
):
    model = numbered_model(delay=0.2)  # single and parallel:3 of a problem run at once
    results, draws, kept = await run(
        tmp_path, problem_file, sandbox, model, strategies="single,parallel:3,hybrid:3", concurrency=3
    )
    by = {(r.problem_id, r.row): r for r in results}
    for p in {r.problem_id for r in results}:
        assert (
            by[(p, "single")].code == agent0_draft(by[(p, "parallel:3")]) == agent0_draft(by[(p, "hybrid:3")])
        )
    # every draft passes its public test, so hybrid repairs nothing but asks one agent for inputs that
    # split its (textually different) survivors: per problem 3 shared drafts + hybrid's own call are
    # computed, and 4 of the 8 calls charged are replays
    assert len(model.calls) == kept == 6 * 4 and draws.replayed == 6 * 4
    assert sum(r.calls for r in results) == 6 * 8


async def test_calls_of_an_earlier_run_are_adopted_and_kept_when_asked_again():
    """``--calls-from``: a request an earlier run computed is replayed, not computed, and kept in this
    run's store; one it never made is computed; unused donor calls are not kept."""
    earlier = Draws()
    first = numbered_model()
    messages = [{"role": "user", "content": "write add"}]
    made = await PairedModel(first, SPEC, earlier, Counter()).complete(messages, seed=1)
    await PairedModel(first, SPEC, earlier, Counter()).complete(messages, seed=2)
    donor = {k: (SPEC, r) for k, r in earlier._done.items()}
    kept: list[str] = []
    model = numbered_model()
    draws = Draws(save=lambda key, spec, r: kept.append(key), donor=donor)
    again = await PairedModel(model, SPEC, draws, Counter()).complete(messages, seed=1)
    assert again.completions[0].text == made.completions[0].text and model.calls == []
    assert (draws.adopted, draws.computed, draws.replayed) == (1, 0, 1) and len(kept) == 1
    await PairedModel(model, SPEC, draws, Counter()).complete(messages, seed=3)
    assert len(model.calls) == 1 and draws.computed == 1 and len(kept) == 2
