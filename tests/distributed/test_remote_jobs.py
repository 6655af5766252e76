"""Jobs over Redis Streams, in one process: RemoteModel calls answered by an in-process Worker
(scripted model, real Redis). Checks idempotent results, error types, takeover and lost jobs."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
import redis.asyncio as aioredis

from memdoor.core.errors import ModelUnavailable, RateLimited
from memdoor.distributed.config import WorkerConfig
from memdoor.distributed.conn import ensure_group
from memdoor.distributed.jobs import GROUP, JobResult
from memdoor.distributed.remote import RemoteConfig, RemoteRun
from memdoor.distributed.worker import Worker
from memdoor.models.scripted import ScriptedModel

SPEC = "scripted:test"
MESSAGES = [{"role": "user", "content": "write code"}]


@pytest.fixture
async def prefix(redis_url):
    p = f"test-{uuid.uuid4().hex[:8]}:"
    yield p
    r = aioredis.Redis.from_url(redis_url)
    keys = [k async for k in r.scan_iter(match=p + "*", count=1000)]
    if keys:
        await r.delete(*keys)
    await r.aclose()


@pytest.fixture
async def r(redis_url):
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


class Running:
    """Workers running as tasks in this event loop; stopped (cleanly) at the end."""

    def __init__(self):
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []
        self.workers: list[Worker] = []

    def start(
        self, redis_url: str, prefix: str, model: ScriptedModel, agent_id: str = "a1", **options
    ) -> Worker:
        cfg = WorkerConfig(
            redis=redis_url, prefix=prefix, agent_id=agent_id, model=SPEC, role="answer", block=0.2, **options
        )
        worker = Worker(cfg, model)
        self.workers.append(worker)
        self.tasks.append(asyncio.create_task(worker.run(self.stop)))
        return worker

    async def close(self):
        self.stop.set()
        await asyncio.wait_for(asyncio.gather(*self.tasks), 30)
        for w in self.workers:
            await w.aclose()


@pytest.fixture
async def running():
    box = Running()
    yield box
    await box.close()


def remote(redis_url: str, prefix: str, **options) -> RemoteRun:
    return RemoteRun(RemoteConfig(url=redis_url, prefix=prefix, **options), run_id="run1")


async def stats(r, prefix: str) -> dict[str, int]:
    return {k.decode(): int(v) for k, v in (await r.hgetall(f"{prefix}stats")).items()}


async def test_a_call_is_answered_by_a_worker_and_stored_once(redis_url, prefix, running, r):
    running.start(redis_url, prefix, ScriptedModel(["hello there"], spec=SPEC))
    run = remote(redis_url, prefix)
    model = run.model(SPEC)
    resp = await model.complete(MESSAGES, n=2, logprobs=True, max_tokens=50)
    assert [c.text for c in resp.completions] == ["hello there", "hello there"]
    assert resp.completions[0].logprobs and resp.usage.completion_tokens == 4
    job_id = run.jobs[0]
    assert job_id.startswith("run1:") and job_id.endswith(":0")
    stored = JobResult.model_validate_json(await r.get(f"{prefix}result:{job_id}"))
    assert stored.ok and stored.agent == "a1" and stored.deliveries == 1
    assert (await stats(r, prefix))["results"] == 1
    assert await r.xlen(f"{prefix}jobs:{SPEC}") == 0  # acknowledged and deleted
    # The same request again in another run with the same id and step reuses the stored result.
    again = remote(redis_url, prefix)
    await again.model(SPEC).complete(MESSAGES, n=2, logprobs=True, max_tokens=50)
    assert again.jobs == run.jobs and (await stats(r, prefix))["results"] == 1
    await model.aclose()
    await again.aclose()


async def test_the_worker_model_error_type_reaches_the_orchestrator(redis_url, prefix, running):
    running.start(redis_url, prefix, ScriptedModel([RateLimited("429 from upstream")], spec=SPEC))
    run = remote(redis_url, prefix)
    with pytest.raises(RateLimited, match="a1"):
        await run.model(SPEC).complete(MESSAGES)
    await run.aclose()


async def test_a_job_done_twice_is_stored_once_first_result_wins(redis_url, prefix, running, r):
    worker = running.start(redis_url, prefix, ScriptedModel(["first"], spec=SPEC))
    run = remote(redis_url, prefix)
    job = run.job(SPEC, MESSAGES, n=1, temperature=0.2, max_tokens=10, logprobs=False, seed=1, stop=None)
    stream = f"{prefix}jobs:{SPEC}"
    await ensure_group(r, stream, GROUP)
    first = await r.xadd(stream, {"job": job.model_dump_json()})
    second = await r.xadd(stream, {"job": job.model_dump_json()})  # the same job enqueued twice
    for _ in range(300):
        s = await stats(r, prefix)
        if s.get("results", 0) + s.get("duplicates", 0) >= 2:
            break
        await asyncio.sleep(0.1)
    assert s["results"] == 1 and s["duplicates"] == 1  # the second answer was dropped, not stored
    resp = await asyncio.wait_for(run.call(job), 30)  # the orchestrator reads the one result
    assert resp.completions[0].text == "first"
    # Two workers finishing the same job: the second result is dropped, the first stays.
    late = JobResult(job=job.id, ok=True, agent="late", model=SPEC, response=resp.model_copy(deep=True))
    late.response.completions[0].text = "second"
    await worker._store(job, late, (first or second).decode())
    kept = JobResult.model_validate_json(await r.get(f"{prefix}result:{job.id}"))
    assert kept.agent == "a1" and kept.response.completions[0].text == "first"
    assert (await stats(r, prefix))["duplicates"] == 2
    await run.aclose()


async def test_a_job_held_by_a_dead_consumer_is_taken_over(redis_url, prefix, running, r):
    run = remote(redis_url, prefix)
    job = run.job(SPEC, MESSAGES, n=1, temperature=0.2, max_tokens=10, logprobs=False, seed=None, stop=None)
    stream = f"{prefix}jobs:{SPEC}"
    await ensure_group(r, stream, GROUP)
    await r.xadd(stream, {"job": job.model_dump_json()})
    got = await r.xreadgroup(GROUP, "ghost", {stream: ">"}, count=1)  # read, never acknowledged
    assert got and got[0][1]
    running.start(redis_url, prefix, ScriptedModel(["rescued"], spec=SPEC), visibility_timeout=0.5)
    for _ in range(300):  # nobody enqueues it again: only a takeover can answer it
        if raw := await r.get(f"{prefix}result:{job.id}"):
            break
        await asyncio.sleep(0.1)
    stored = JobResult.model_validate_json(raw)
    assert stored.response.completions[0].text == "rescued"
    assert stored.deliveries >= 2
    assert (await stats(r, prefix))["reclaimed"] == 1
    assert (await r.xpending(stream, GROUP))["pending"] == 0
    await run.aclose()


async def test_a_job_that_vanished_from_its_stream_is_enqueued_again(redis_url, prefix, running, r):
    run = remote(redis_url, prefix, poll=0.2)
    job = run.job(SPEC, MESSAGES, n=1, temperature=0.2, max_tokens=10, logprobs=False, seed=None, stop=None)
    stream = f"{prefix}jobs:{SPEC}"
    call = asyncio.create_task(run.call(job))
    while not await r.xlen(stream):
        await asyncio.sleep(0.05)
    await r.delete(stream)  # as if Redis had restarted without its data
    running.start(redis_url, prefix, ScriptedModel(["again"], spec=SPEC))
    resp = await asyncio.wait_for(call, 30)
    assert resp.completions[0].text == "again"
    assert (await stats(r, prefix))["requeued"] >= 1
    await run.aclose()


async def test_no_live_worker_for_the_model_fails_clearly(redis_url, prefix, running, r):
    running.start(redis_url, prefix, ScriptedModel(["x"], spec=SPEC))  # serves another model only
    run = remote(redis_url, prefix, wait_for_worker=0.5, poll=0.1)
    with pytest.raises(ModelUnavailable, match="no live worker serves model 'scripted:other'"):
        await run.model("scripted:other").complete(MESSAGES)
    assert await r.xlen(f"{prefix}jobs:scripted:other") == 1  # still queued for a worker that comes later
    await run.aclose()


async def test_workers_register_and_deregister(redis_url, prefix, r):
    box = Running()
    box.start(redis_url, prefix, ScriptedModel(["x"], spec=SPEC), agent_id="reg", heartbeat_ttl=5)
    deadline = time.monotonic() + 120  # the worker connects and registers as its task gets to run
    while not await r.hexists(f"{prefix}agents", "reg"):
        assert time.monotonic() < deadline, "the worker did not register"
        await asyncio.sleep(0.05)
    assert 0 < await r.pttl(f"{prefix}agent:reg") <= 5000
    await box.close()
    assert not await r.hexists(f"{prefix}agents", "reg") and not await r.exists(f"{prefix}agent:reg")
