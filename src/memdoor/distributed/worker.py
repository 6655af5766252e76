"""One agent of a distributed team: ``memdoor worker``.

A worker registers itself (a heartbeat key with a TTL, listed in the ``agents`` hash), then takes
jobs for its model from the stream ``P jobs:<model>`` as a member of the consumer group ``workers``:

1. first a job whose worker died (pending and idle longer than ``visibility_timeout``, via XAUTOCLAIM),
   else a new one (XREADGROUP);
2. while its model runs, it keeps the job's lease fresh (XCLAIM to itself resets the idle time), so a
   long call is never stolen from a live worker;
3. it stores the result with ``SET NX`` (first result wins), wakes the orchestrator, and only then
   acknowledges (XACK) and deletes the stream entry. With a team key (:mod:`.signing`) the result is
   signed, and a result already there counts only if the key vouches for it: a planted one is
   replaced (compare-and-set on the value read), so a forgery never makes a genuine answer be dropped.

An entry that is not a job a lead could have issued on this stream (another model, or an id that is not
its own request's: :meth:`.jobs.Job.mismatch`) is dropped unanswered: acknowledged, logged, counted.

Other roles of the same agent run alongside (``run(stop, alongside=...)``): ``memdoor worker`` adds the
seed leader (:class:`.seed.SeedLeader`) when the role is ``all`` or ``lead``; this module knows nothing
of it. On SIGTERM the worker takes no new work, finishes its current job within ``grace`` seconds or
hands it back (makes it claimable at once), stops the roles alongside (the leader gives up its seed
tasks), deregisters and exits 0. When Redis goes away it retries with backoff and carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
from pydantic import ValidationError
from redis.exceptions import RedisError, ResponseError

from memdoor.core.errors import MemoryStoreError, ModelError
from memdoor.core.net import redact_url
from memdoor.core.protocols import Model
from memdoor.distributed.config import WorkerConfig
from memdoor.distributed.conn import (
    REDIS_DOWN,
    Backoff,
    connect,
    describe,
    ensure_group,
    refusal,
    shown,
    text,
)
from memdoor.distributed.jobs import ERRORS, GROUP, Job, JobResult, Keys
from memdoor.distributed.signing import RESULT, TeamKey, served_name
from memdoor.problems.jsonl import parse_json

log = logging.getLogger("memdoor.worker")

_STORE = """
local stored = false
if ARGV[7] == 'nx' then
  stored = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
elseif ARGV[7] == 'cas' then
  if (redis.call('GET', KEYS[1]) or '') ~= ARGV[8] then return -1 end
  stored = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  if ARGV[8] ~= '' then redis.call('HINCRBY', KEYS[3], 'forged_replaced', 1) end
end
if stored then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('HINCRBY', KEYS[3], 'results', 1)
  redis.call('HINCRBY', KEYS[3], 'done:' .. ARGV[3], 1)
  redis.call('RPUSH', KEYS[6], ARGV[6])
  redis.call('EXPIRE', KEYS[6], ARGV[2])
else
  redis.call('HINCRBY', KEYS[3], 'duplicates', 1)
end
redis.call('DEL', KEYS[5])
redis.call('XACK', KEYS[4], ARGV[4], ARGV[5])
redis.call('XDEL', KEYS[4], ARGV[5])
if stored then return 1 end
return 0
"""
"""Store a result once (first wins), push it to the waiting orchestrator, log the work, then ack —
in one round trip. Keys: result, reply, stats, stream, queued, work; args: result JSON, TTL, agent,
group, entry id, work entry JSON, mode, expected value. Modes: ``nx`` (no team key: the first result
wins), ``cas`` (team key: store unless the value changed since it was read as ``expected``, '' for
none or a refused forgery; -1 when it changed: read again), ``dup`` (a genuine result is there: ack)."""


class Worker:
    """Runs a worker until ``stop`` is set. ``model`` is None only for a ``lead`` worker."""

    def __init__(
        self,
        config: WorkerConfig,
        model: Model | None,
        *,
        redis: aioredis.Redis | None = None,
        team_key: TeamKey | None = None,
    ):
        """``team_key``: sign every result (and trust only signed ones); None: the unsigned protocol."""
        if config.answers and model is None:
            raise ValueError("a worker that answers jobs needs a model")
        self.config = config
        self.model = model
        self.team_key = team_key
        self.keys = Keys(config.prefix)
        self.instance = uuid.uuid4().hex[:8]
        self.started = time.time()
        self.jobs_done = 0
        self._redis = redis
        self._stopping = asyncio.Event()
        self._store_script: Any = None
        self.served = None if config.model is None else served_name(config.model, team_key)
        """The model's name in Redis (stream, registration, jobs, results) and the log: its spec with
        no password or key of its URL (the raw spec stays in this process, in its model pool)."""

    @property
    def redis(self) -> aioredis.Redis:
        if self._redis is None:
            self._redis = connect(self.config.redis, timeout=max(30.0, 5 * self.config.block))
        return self._redis

    @property
    def stream(self) -> str:
        assert self.served is not None
        return self.keys.stream(self.served)

    def info(self) -> dict[str, Any]:
        c = self.config
        return {
            "agent": c.agent_id,
            "model": self.served,
            "role": c.role,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "instance": self.instance,
            "started": self.started,
            "jobs_done": self.jobs_done,
        }

    # -- lifecycle -------------------------------------------------------------------------------

    async def run(
        self, stop: asyncio.Event, *, alongside: Sequence[Callable[[asyncio.Event], Awaitable[None]]] = ()
    ) -> None:
        """Serve until ``stop`` is set, then shut down cleanly (see the module docs).

        ``alongside``: other roles of this agent, each started once the worker is registered and given
        the event that is set when the worker stops taking work; a role that fails stops the worker."""
        await self._wait_for_redis(stop)
        if stop.is_set():
            return
        await self._check_unique_id()
        await self._beat()
        log.info(
            "%s: serving %s as %s on %s (%s)",
            self.config.agent_id,
            self.served,
            self.config.role,
            redact_url(self.config.redis),
            "results signed with the team key" if self.team_key else "no team key: results unsigned",
        )
        beat = asyncio.create_task(self._heartbeat_loop())
        slots = [
            asyncio.create_task(self._job_loop())
            for _ in range(self.config.concurrency if self.config.answers else 0)
        ]
        roles = [asyncio.create_task(role(self._stopping)) for role in alongside]
        watched = [*slots, *roles]
        stop_wait = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait([stop_wait, *watched], return_when=asyncio.FIRST_COMPLETED)
        failed = next((t for t in done if t is not stop_wait and t.exception()), None)
        failure = failed.exception() if failed is not None else None
        self._stopping.set()
        stop_wait.cancel()
        if slots:
            _, late = await asyncio.wait(slots, timeout=self.config.grace)
            for t in late:
                t.cancel()  # the job is handed back (see _handle)
            await asyncio.gather(*slots, return_exceptions=True)
        await asyncio.gather(*roles, return_exceptions=True)
        beat.cancel()
        await asyncio.gather(beat, return_exceptions=True)
        await self._deregister()
        log.info("%s: stopped after %d job(s)", self.config.agent_id, self.jobs_done)
        if isinstance(failure, RedisError):
            what = "the job stream" if failed in slots else "a command of a role alongside"
            raise MemoryStoreError(
                f"{self.config.agent_id}: Redis at {redact_url(self.config.redis)} refused {what}: "
                f"{describe(failure, self.config.redis)}"
            ) from None
        if failure is not None:
            raise failure

    async def aclose(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def _wait_for_redis(self, stop: asyncio.Event) -> None:
        deadline = time.monotonic() + self.config.startup_timeout
        backoff = Backoff()
        while not stop.is_set():
            try:
                await self.redis.ping()
                return
            except REDIS_DOWN as e:
                url = self.config.redis
                if (refused := refusal(e, url)) is not None:
                    raise refused from None  # wrong credentials or CA: waiting will not help
                if time.monotonic() > deadline:
                    raise MemoryStoreError(
                        f"Redis at {redact_url(url)} unreachable for {self.config.startup_timeout:g}s: "
                        f"{describe(e, url)}"
                    ) from None
                if backoff.failures == 0:
                    log.warning(
                        "%s: waiting for Redis at %s (%s)",
                        self.config.agent_id,
                        redact_url(url),
                        type(e).__name__,
                    )
                await _sleep_or_stop(stop, backoff.next())

    async def _check_unique_id(self) -> None:
        """Warn when another live worker uses this AGENT_ID (e.g. a restart within the heartbeat TTL).
        Whatever another client left at the heartbeat key is only shown, and replaced by the first beat."""
        try:
            raw = await self.redis.get(self.keys.heartbeat(self.config.agent_id))
        except ResponseError:  # not a string: the first beat replaces it
            raw = b""
        if raw is None:
            return
        log.warning(
            "%s: another worker registered this agent id (host %s, pid %s) and its heartbeat is live; "
            "agent ids should be unique",
            self.config.agent_id,
            shown(str(_field(raw, "host"))),
            shown(str(_field(raw, "pid"))),
        )

    async def _beat(self) -> None:
        c, info = self.config, json.dumps(self.info())
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self.keys.heartbeat(c.agent_id), info, px=int(c.heartbeat_ttl * 1000))
            pipe.hset(self.keys.agents, c.agent_id, info)
            await pipe.execute()

    async def _heartbeat_loop(self) -> None:
        backoff = Backoff()
        while True:
            await asyncio.sleep(self.config.heartbeat_ttl / 3 if backoff.failures == 0 else backoff.next())
            try:
                await self._beat()
                backoff.reset()
            except REDIS_DOWN:
                backoff.next()

    async def _deregister(self) -> None:
        with contextlib.suppress(*REDIS_DOWN):
            raw = await self.redis.get(self.keys.heartbeat(self.config.agent_id))
            if raw is None or _field(raw, "instance") == self.instance:
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.delete(self.keys.heartbeat(self.config.agent_id))
                    pipe.hdel(self.keys.agents, self.config.agent_id)
                    await pipe.execute()

    # -- jobs ------------------------------------------------------------------------------------

    async def _job_loop(self) -> None:
        backoff = Backoff()
        need_group = True
        while not self._stopping.is_set():
            try:
                if need_group:
                    await ensure_group(self.redis, self.stream, GROUP)
                    need_group = False
                entry = await self._next_entry()
                if backoff.failures:
                    log.warning("%s: Redis is back", self.config.agent_id)
                backoff.reset()
                if entry is not None:
                    await self._handle(*entry)
            except REDIS_DOWN as e:
                if backoff.failures == 0:
                    log.warning(
                        "%s: Redis unreachable (%s); retrying", self.config.agent_id, type(e).__name__
                    )
                need_group = True
                await _sleep_or_stop(self._stopping, backoff.next())
            except ResponseError:
                # The group can vanish when Redis restarts without its data: recreate it and go on.
                # Any other refusal is a real error.
                if not await ensure_group(self.redis, self.stream, GROUP):
                    raise

    async def _next_entry(self) -> tuple[str, dict, int] | None:
        """A job whose worker died (idle past the visibility timeout), else a new one, else None."""
        r, c = self.redis, self.config
        claimed = await r.xautoclaim(
            self.stream,
            GROUP,
            c.agent_id,
            min_idle_time=int(c.visibility_timeout * 1000),
            start_id="0-0",
            count=1,
        )
        entries = claimed[1] if len(claimed) > 1 else []
        entries = [e for e in entries if e and e[1]]
        if entries:
            entry_id, fields = entries[0]
            pending = await r.xpending_range(self.stream, GROUP, min=entry_id, max=entry_id, count=1)
            deliveries = int(pending[0]["times_delivered"]) if pending else 2
            await r.hincrby(self.keys.stats, "reclaimed", 1)
            log.info("%s: took over job entry %s (delivery %d)", c.agent_id, text(entry_id), deliveries)
            return text(entry_id), fields, deliveries
        got = await r.xreadgroup(GROUP, c.agent_id, {self.stream: ">"}, count=1, block=int(c.block * 1000))
        for _stream, items in got or []:
            for entry_id, fields in items:
                return text(entry_id), fields, 1
        return None

    async def _handle(self, entry_id: str, fields: dict, deliveries: int) -> None:
        c = self.config
        raw = fields.get(b"job", fields.get("job"))
        try:
            job = Job.model_validate_json(raw or b"")
        except ValidationError:
            log.warning("%s: dropped unreadable job entry %s", c.agent_id, entry_id)
            await self._ack(entry_id, stat="bad_jobs")
            return
        if (why := job.mismatch(self.served or "")) is not None:
            # entries are not signed: answering this one would sign an answer to another request
            log.warning(
                "%s: dropped job entry %s under id %s: %s",
                c.agent_id,
                entry_id,
                shown(job.id),
                shown(why, 300),
            )
            await self._ack(entry_id, stat="forged_jobs")
            return
        if deliveries > 1 and await self._genuine_result(job):
            # taken over from a worker that was only slow and finished after all
            await self._ack(entry_id, stat="already_answered")
            return
        renew = asyncio.create_task(self._renew(entry_id))
        started = time.monotonic()
        try:
            result = await self._answer(job, deliveries)
        except asyncio.CancelledError:
            await self._hand_back(entry_id)
            raise
        finally:
            renew.cancel()
        result.seconds = round(time.monotonic() - started, 4)
        await self._store(job, result, entry_id)

    async def _answer(self, job: Job, deliveries: int) -> JobResult:
        c = self.config
        assert self.model is not None and self.served is not None
        base = {"job": job.id, "agent": c.agent_id, "model": self.served, "deliveries": deliveries}
        try:
            response = await self.model.complete(
                job.messages,
                n=job.n,
                temperature=job.temperature,
                max_tokens=job.max_tokens,
                logprobs=job.logprobs,
                seed=job.seed,
                stop=job.stop,
            )
        except ModelError as e:
            kind = type(e).__name__ if type(e).__name__ in ERRORS else "ModelError"
            log.warning(
                "%s: job %s failed: %s: %s", c.agent_id, shown(job.id), type(e).__name__, shown(str(e))
            )
            return JobResult(ok=False, error_type=kind, error=str(e), **base)
        return JobResult(ok=True, response=response, **base)

    async def _renew(self, entry_id: str) -> None:
        """Keep the job's lease: reset its idle time every third of the visibility timeout."""
        c = self.config
        while True:
            await asyncio.sleep(c.visibility_timeout / 3)
            with contextlib.suppress(*REDIS_DOWN):
                await self.redis.xclaim(self.stream, GROUP, c.agent_id, 0, [entry_id], justid=True)

    async def _hand_back(self, entry_id: str) -> None:
        """Make the job claimable by another worker at once (its idle time set past the timeout)."""
        c = self.config
        idle = int(c.visibility_timeout * 1000) * 10
        with contextlib.suppress(*REDIS_DOWN, asyncio.TimeoutError):
            async with asyncio.timeout(5):
                await self.redis.xclaim(self.stream, GROUP, c.agent_id, 0, [entry_id], idle=idle, justid=True)
                await self.redis.hincrby(self.keys.stats, "handed_back", 1)
                log.info("%s: handed back job entry %s", c.agent_id, entry_id)

    async def _genuine_result(self, job: Job) -> bool:
        """Whether the job has a result that counts (any result without a team key; one it vouches for with one)."""
        key = self.keys.result(job.id)
        if self.team_key is None:
            return bool(await self.redis.exists(key))
        return self.team_key.vouches(RESULT, key, await self.redis.get(key))

    async def _store_mode(self, job: Job) -> tuple[str, bytes | str]:
        """How to store (see :data:`_STORE`): ``nx`` without a team key; with one, ``dup`` when a genuine
        result is there, else ``cas`` on the value read (a planted result is logged and replaced)."""
        if self.team_key is None:
            return "nx", ""
        key = self.keys.result(job.id)
        raw = await self.redis.get(key)
        if raw is None:
            return "cas", ""
        if self.team_key.vouches(RESULT, key, raw):
            return "dup", ""
        log.warning(
            "%s: job %s: replacing a result the team key does not vouch for",
            self.config.agent_id,
            shown(job.id),
        )
        return "cas", raw

    async def _store(self, job: Job, result: JobResult, entry_id: str) -> None:
        """Store the result once (first wins), wake the orchestrator, then ack. Retries while Redis is down:
        an answer in hand is not thrown away (unless the worker is told to stop meanwhile)."""
        r, c, keys = self.redis, self.config, self.keys
        backoff = Backoff()
        if self._store_script is None:
            self._store_script = r.register_script(_STORE)
        payload = (
            result.model_dump_json()
            if self.team_key is None
            else self.team_key.dumps(RESULT, keys.result(job.id), result.model_dump(mode="json"))
        )
        while True:
            try:
                mode, expected = await self._store_mode(job)
                outcome = int(
                    await self._store_script(
                        keys=[
                            keys.result(job.id),
                            keys.reply(job.id),
                            keys.stats,
                            self.stream,
                            keys.queued(job.id),
                            keys.work(job.run),
                        ],
                        args=[
                            payload,
                            c.result_ttl,
                            c.agent_id,
                            GROUP,
                            entry_id,
                            json.dumps(work_entry(job, result)),
                            mode,
                            expected,
                        ],
                    )
                )
                if outcome >= 0:
                    stored = outcome == 1
                    break
            except REDIS_DOWN:
                await asyncio.sleep(backoff.next())
        self.jobs_done += 1
        log.info(
            "%s: job %s %s in %.2fs%s",
            c.agent_id,
            shown(job.id),
            "answered" if result.ok else "failed",
            result.seconds,
            "" if stored else " (already answered by another worker; dropped)",
        )

    async def _ack(self, entry_id: str, *, stat: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xack(self.stream, GROUP, entry_id)
            pipe.xdel(self.stream, entry_id)
            pipe.hincrby(self.keys.stats, stat, 1)
            await pipe.execute()


def work_entry(job: Job, result: JobResult) -> dict[str, Any]:
    """What the run's work log records about one answered job."""
    usage = result.response.usage if result.response is not None else None
    return {
        "job": job.id,
        "step": job.step,
        "agent": result.agent,
        "model": result.model,
        "ok": result.ok,
        "seconds": result.seconds,
        "deliveries": result.deliveries,
        "tokens": 0 if usage is None else usage.prompt_tokens + usage.completion_tokens,
    }


def _field(raw: bytes | str, name: str) -> Any:
    """``name`` of the JSON object ``raw`` (None when ``raw`` is not a JSON object)."""
    try:
        data = parse_json(raw)
    except ValueError:  # not JSON, not UTF-8, or nested too deeply
        return None
    return data.get(name) if isinstance(data, dict) else None


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
