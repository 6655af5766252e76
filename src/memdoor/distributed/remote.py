"""Models whose calls are jobs answered by workers: how strategies run unchanged over Redis.

The orchestrator (``memdoor solve --redis``, or the worker that claimed a seed task) builds its
team from :class:`RemoteModel` objects. Each ``complete`` call becomes a :class:`~.jobs.Job` on the
stream of its model; whichever live worker serving that model takes it, and the call returns when the
result is stored. The orchestrator's ledger, budget and trace record each call exactly once.

While it waits, the orchestrator re-adds a job that vanished from its stream without a result
(Redis restarted without its data), and gives up with :class:`~memdoor.core.errors.ModelUnavailable`
when no live worker serves the model for ``wait_for_worker`` seconds or Redis stays unreachable
past the deadline.

With a team key (:mod:`.signing`), a result counts only if the key vouches for it (signed for this
very job's key); anything else — planted by a Redis client without the key, or a signature copied
from another job — is refused: logged once per job, counted (``forged`` in the stats hash), removed
from the result key if still there, and the call keeps waiting for the genuine result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Sequence

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdoor.core.errors import ForgedRecord, ModelTimeout, ModelUnavailable
from memdoor.core.messages import Message, ModelResponse
from memdoor.core.net import redact_url
from memdoor.distributed.conn import REDIS_DOWN, Backoff, connect, describe, live_agents, refusal, shown
from memdoor.distributed.jobs import Job, JobResult, Keys, job_id
from memdoor.distributed.signing import RESULT, TeamKey, served_name
from memdoor.models.pool import ModelPool

log = logging.getLogger("memdoor.remote")

ANSWERING_ROLES = ("all", "answer")
"""Worker roles that take model jobs (see :class:`memdoor.distributed.config.WorkerConfig`)."""


_ENQUEUE = """
local result = redis.call('GET', KEYS[1])
if result then
  redis.call('RPUSH', KEYS[4], result)
  redis.call('EXPIRE', KEYS[4], ARGV[3])
  return {'result', ''}
end
local queued = redis.call('GET', KEYS[2])
if queued and #redis.call('XRANGE', KEYS[3], queued, queued) > 0 then return {'queued', queued} end
local entry = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[1], '*', 'job', ARGV[2])
redis.call('SET', KEYS[2], entry, 'EX', ARGV[3])
return {'added', entry}
"""
"""Keys: result, queued, stream, reply. If the job has a result, push it to the reply list (the BLOP
sent in the same round trip takes it); else if an earlier orchestrator of the run enqueued the job and
its entry is still there, wait for that; else XADD it and remember its entry id."""

_DROP_FORGED = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""
"""Delete a refused result if the key still holds exactly it (a genuine result stored meanwhile stays)."""


class RemoteConfig(BaseModel):
    """How an orchestrator sends model calls to workers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(default="redis://127.0.0.1:6379/0", description="Redis URL shared with the workers.")
    prefix: str = Field(default="memdoor:", description="Key prefix shared with the workers.")
    job_timeout: float = Field(
        default=3600.0,
        gt=0,
        description="Seconds one call may take from enqueue to result, queueing included.",
    )
    wait_for_worker: float = Field(
        default=60.0,
        gt=0,
        description="Seconds a call waits while no live worker serves its model before failing.",
    )
    poll: float = Field(
        default=1.0, gt=0, description="Seconds between checks (lost job, live workers) while waiting."
    )
    stream_maxlen: int = Field(default=100_000, gt=0, description="Approximate cap of each job stream.")


class RemoteRun:
    """The Redis client, run id and step counter shared by the remote models of one run."""

    def __init__(
        self,
        config: RemoteConfig | None = None,
        run_id: str | None = None,
        *,
        team_key: TeamKey | None = None,
    ):
        """``team_key``: take only results it vouches for; None: take any result (the unsigned protocol)."""
        self.config = config or RemoteConfig()
        self.team_key = team_key
        self._refused: set[str] = set()
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.keys = Keys(self.config.prefix)
        self.jobs: list[str] = []
        """Ids of the jobs issued, in order."""
        self._redis: aioredis.Redis | None = None
        self._step = 0
        self._open_models = 0
        self._repeats: dict[str, int] = {}

    @property
    def redis(self) -> aioredis.Redis:
        if self._redis is None:
            self._redis = connect(self.config.url, timeout=max(30.0, 5 * self.config.poll))
        return self._redis

    def model(self, spec: str) -> RemoteModel:
        """A model answering as ``spec`` through the workers that serve ``spec``. The run's client
        closes when the last of its models is closed (so closing a pool closes everything)."""
        self._open_models += 1
        return RemoteModel(spec, self)

    async def _model_closed(self) -> None:
        self._open_models -= 1
        if self._open_models <= 0:
            await self.aclose()

    def pool(self, specs: Sequence[str]) -> ModelPool:
        """A model pool whose every spec in ``specs`` is served remotely."""
        pool = ModelPool()
        for spec in dict.fromkeys(specs):
            pool.add(spec, self.model(spec))
        return pool

    def job(self, spec: str, messages: Sequence[Message], **params) -> Job:
        """The next job of this run (numbers the step)."""
        step = self._step
        self._step += 1
        stop = params.pop("stop", None)
        stop = list(stop) if stop else None
        job = Job(
            id="",
            run=self.run_id,
            step=step,
            model=served_name(spec, self.team_key),  # its name in Redis: no password or key of its URL
            messages=[dict(m) for m in messages],
            stop=stop,
            **params,
        )
        # the digest of the job as validated (what a worker recomputes), e.g. temperature 0 as 0.0
        digest = job.request_digest()
        repeat = self._repeats[digest] = self._repeats.get(digest, -1) + 1
        job.id = job_id(self.run_id, digest, repeat)
        self.jobs.append(job.id)
        return job

    async def call(self, job: Job) -> ModelResponse:
        """Enqueue ``job`` (unless its result already exists) and wait for its result."""
        cfg, keys = self.config, self.keys
        r = self.redis
        stream, result_key, reply_key = keys.stream(job.model), keys.result(job.id), keys.reply(job.id)
        queued_key = keys.queued(job.id)
        started = time.monotonic()
        deadline = started + cfg.job_timeout
        backoff = Backoff()
        entry_id: bytes | str | None = None
        no_worker_since: float | None = None
        last_error: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                if entry_id is None:
                    # One round trip: enqueue (or find the result / the queued entry), then wait.
                    async with r.pipeline(transaction=False) as pipe:
                        pipe.eval(
                            _ENQUEUE,
                            4,
                            result_key,
                            queued_key,
                            stream,
                            reply_key,
                            cfg.stream_maxlen,
                            job.model_dump_json(),
                            int(2 * cfg.job_timeout) + 60,
                        )
                        pipe.blpop([reply_key], timeout=cfg.poll)
                        (kind, value), got = await pipe.execute()
                    entry_id = value if kind != b"result" else b"0-0"
                else:
                    got = await r.blpop([reply_key], timeout=cfg.poll)
                if (
                    got is not None and (result := await self._take(job, got[1])) is not None
                ):  # pushed by the worker
                    return self._finish(result, started)
                if (result := await self._take(job, await r.get(result_key), stored=True)) is not None:
                    await r.delete(reply_key)
                    return self._finish(result, started)
                if not await r.xrange(stream, entry_id, entry_id):
                    if (result := await self._take(job, await r.get(result_key), stored=True)) is not None:
                        return self._finish(result, started)
                    entry_id = None  # lost with a Redis restart (or never added: a forgery was there)
                    await r.hincrby(keys.stats, "requeued", 1)
                if await self._served(job.model):
                    no_worker_since = None
                else:
                    no_worker_since = no_worker_since or time.monotonic()
                    if time.monotonic() - no_worker_since >= cfg.wait_for_worker:
                        raise ModelUnavailable(
                            f"no live worker serves model {job.model!r} (waited {cfg.wait_for_worker:g}s; "
                            + await self._why_unserved(job.model)
                            + ")"
                        )
                backoff.reset()
            except REDIS_DOWN as e:
                if (refused := refusal(e, cfg.url)) is not None:
                    raise refused from None
                last_error = e
                await asyncio.sleep(min(backoff.next(), max(0.0, deadline - time.monotonic())))
        if last_error is not None and backoff.failures:
            raise ModelUnavailable(
                f"Redis at {redact_url(cfg.url)} unreachable while waiting for job {job.id}: "
                f"{describe(last_error, cfg.url)}"
            )
        raise ModelTimeout(f"job {job.id} for {job.model!r} got no result within {cfg.job_timeout:g}s")

    async def _why_unserved(self, model: str) -> str:
        """What to do about no worker serving ``model``: a worker serving the same shown spec under
        another digest holds other credentials or another team key (:func:`served_name`)."""
        shown, digest, _ = model.rpartition("#")
        if digest and shown:
            agents = await live_agents(self.redis, self.keys)
            if any(str(a.get("model", "")).rpartition("#")[0] == shown for a in agents.values()):
                return (
                    "a worker serves this endpoint under another digest: it holds other credentials, or "
                    "another MEMDOOR_TEAM_KEY than this process; give both the same"
                )
        return "start one with memdoor worker --model ..."

    async def _served(self, model: str) -> bool:
        agents = await live_agents(self.redis, self.keys)
        return any(a.get("model") == model and a.get("role") in ANSWERING_ROLES for a in agents.values())

    async def _take(self, job: Job, raw: bytes | None, *, stored: bool = False) -> JobResult | None:
        """The result ``raw`` if it counts, else None. With a team key, a result it does not vouch for
        is refused (logged once per job, counted) and, if ``stored`` at the result key, deleted there so
        that it cannot stand in for the genuine one (which the worker stores, or the job is enqueued)."""
        if raw is None:
            return None
        if self.team_key is None:
            try:
                return JobResult.model_validate_json(raw)
            except ValidationError as e:
                raise ModelUnavailable(
                    f"unreadable result for job {job.id}: {e.error_count()} error(s)"
                ) from None
        key = self.keys.result(job.id)
        try:
            record = self.team_key.open(RESULT, key, raw)
            return JobResult.model_validate(record)
        except (ForgedRecord, ValidationError) as e:
            reason = str(e) if isinstance(e, ForgedRecord) else f"signed but unreadable result at {key}"
        if job.id not in self._refused:
            self._refused.add(job.id)
            log.warning(
                "refused a result for job %s: %s; waiting for the genuine one", shown(job.id), shown(reason)
            )
        await self.redis.hincrby(self.keys.stats, "forged", 1)
        if stored:
            await self.redis.eval(_DROP_FORGED, 1, key, raw)
        return None

    @staticmethod
    def _finish(result: JobResult, started: float) -> ModelResponse:
        result.raise_error()
        assert result.response is not None
        response = result.response.model_copy(deep=True)
        response.usage.latency_s = time.monotonic() - started
        return response

    async def aclose(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None


class RemoteModel:
    """A :class:`memdoor.core.protocols.Model` whose calls are answered by workers serving ``spec``."""

    def __init__(self, spec: str, run: RemoteRun):
        self.spec = spec
        self._run = run
        self._closed = False

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.2,
        max_tokens: int = 1024,
        logprobs: bool = False,
        seed: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> ModelResponse:
        job = self._run.job(
            self.spec,
            messages,
            n=n,
            temperature=temperature,
            max_tokens=max_tokens,
            logprobs=logprobs,
            seed=seed,
            stop=stop,
        )
        return await self._run.call(job)

    async def aclose(self) -> None:
        """Release this model; the run's client closes with its last model (or :meth:`RemoteRun.aclose`)."""
        if not self._closed:
            self._closed = True
            await self._run._model_closed()


@contextlib.asynccontextmanager
async def remote_pool(
    url: str,
    specs: Sequence[str],
    *,
    run_id: str | None = None,
    team_key: TeamKey | None = None,
    **options,
) -> AsyncIterator[ModelPool]:
    """A model pool serving ``specs`` through the workers on ``url`` (for ``solve``/``bench --redis``;
    without a context manager, ``RemoteRun(RemoteConfig(url=url)).pool(specs)`` and ``pool.aclose()``)::

    async with remote_pool(args.redis, config.models) as pool:
        async with open_env(memory_url=args.redis, pool=pool) as env: ...
    """
    run = RemoteRun(RemoteConfig(url=url, **options), run_id=run_id, team_key=team_key)
    try:
        yield run.pool(specs)
    finally:
        await run.aclose()
