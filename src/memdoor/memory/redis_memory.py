"""Team memory in Redis, shared by agents in many processes or machines (the ``redis`` extra).

Key layout (``P`` is the prefix, ``T`` the task id and ``K`` the kind, both with ``%`` and ``:``
percent-escaped so no two (task, kind) pairs can share a key):

- ``P t:T:log:K`` — a LIST per (task, kind); ``RPUSH`` appends and its reply gives the position.
- ``P t:T:kinds`` — a SET of the kinds the task has logs for.
- ``P t:T:values`` — a HASH of small JSON values (:meth:`RedisMemory.put`).
- ``P final:T`` by default — a STRING holding the final answer; ``final_key`` moves it (the seed
  protocol reads ``memory:<id>``) and ``final_mirror_key`` writes a second copy.
- ``P tasks`` — a sorted set of task ids, scored by the time of their last write.

Every value is JSON text. Errors talking to Redis become :class:`memdoor.core.errors.MemoryStoreError`,
decided by the exception's type.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from memdoor.core.errors import MemoryStoreError, UsageError, validation_problems
from memdoor.core.net import redact_url, scrub
from memdoor.memory.codec import decode, encode, encode_entry


class RedisMemoryConfig(BaseModel):
    """Where and how :class:`RedisMemory` keeps a team's memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(
        default="redis://127.0.0.1:6379/0",
        description="Redis URL (redis://, rediss:// or unix://), database number included.",
    )
    prefix: str = Field(default="memdoor:", description="Prefix of every key this memory writes.")
    ttl_seconds: int | None = Field(
        default=None,
        gt=0,
        description="Expire a task's keys this long after its last write; None keeps them until delete().",
    )
    final_key: str = Field(
        default="{prefix}final:{task}",
        description="Key of the final answer; ``{prefix}`` and ``{task}`` (the raw task id) are filled in. "
        "The seed client protocol reads ``memory:{task}``.",
    )
    final_mirror_key: str | None = Field(
        default=None,
        description="A second key that also receives the final answer (same placeholders), e.g. ``memory:{task}``.",
    )
    connect_timeout: float = Field(default=5.0, gt=0, description="Seconds to wait for a connection.")
    timeout: float = Field(default=30.0, gt=0, description="Seconds to wait for a command's reply.")
    retries: int = Field(
        default=3,
        ge=0,
        description="Retries (with backoff) after a connection error. A reply lost after Redis applied an "
        "append can, rarely, make that entry land twice; nothing is ever overwritten.",
    )


def _part(text: str) -> str:
    """A task id or kind made safe to sit between ``:`` separators."""
    return text.replace("%", "%25").replace(":", "%3A")


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


class RedisMemory:
    """The :class:`memdoor.core.protocols.Memory` API over Redis; many processes may share one store.

    A client belongs to the event loop it is first used in: open one per process (or per loop).
    """

    name = "redis"

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", **options: Any) -> None:
        try:
            self.config = RedisMemoryConfig(url=url, **options)
        except ValidationError as e:
            problems = validation_problems(e)
            raise UsageError(f"bad Redis memory options: {problems}") from e
        cfg = self.config
        try:
            self._redis = aioredis.Redis.from_url(
                cfg.url,
                socket_connect_timeout=cfg.connect_timeout,
                socket_timeout=cfg.timeout,
                retry=Retry(ExponentialBackoff(cap=2.0, base=0.05), cfg.retries),
            )
        except ValueError as e:  # redis-py's answer to a URL it cannot parse
            raise MemoryStoreError(
                f"bad Redis URL {redact_url(cfg.url)!r}: {scrub(str(e), cfg.url)}"
            ) from None

    @property
    def redis(self) -> aioredis.Redis:
        """The underlying ``redis.asyncio`` client (for callers that need more than this API)."""
        return self._redis

    # -- keys ------------------------------------------------------------------------------------

    def log_key(self, task_id: str, kind: str) -> str:
        return f"{self.config.prefix}t:{_part(task_id)}:log:{_part(kind)}"

    def kinds_key(self, task_id: str) -> str:
        return f"{self.config.prefix}t:{_part(task_id)}:kinds"

    def values_key(self, task_id: str) -> str:
        return f"{self.config.prefix}t:{_part(task_id)}:values"

    def final_keys(self, task_id: str) -> list[str]:
        """Keys the final answer is written to; the first is the one read back."""
        templates = [self.config.final_key]
        if self.config.final_mirror_key:
            templates.append(self.config.final_mirror_key)
        return [t.format(prefix=self.config.prefix, task=task_id) for t in templates]

    @property
    def tasks_key(self) -> str:
        return f"{self.config.prefix}tasks"

    # -- errors ----------------------------------------------------------------------------------

    @contextmanager
    def _store(self, what: str) -> Iterator[None]:
        try:
            yield
        except RedisError as e:
            url = self.config.url
            raise MemoryStoreError(
                f"Redis memory at {redact_url(url)}: {what} failed: {type(e).__name__}: {scrub(str(e), url)}"
            ) from e

    def _touch(self, pipe: Any, task_id: str, *keys: str) -> None:
        """Queue: note ``task_id`` as written now, and renew the TTL of ``keys``."""
        pipe.zadd(self.tasks_key, {task_id: time.time()})
        if self.config.ttl_seconds:
            for key in keys:
                pipe.expire(key, self.config.ttl_seconds)

    # -- the Memory API --------------------------------------------------------------------------

    async def append(self, task_id: str, kind: str, entry: dict[str, Any]) -> int:
        """Append ``entry`` to the ``kind`` log of ``task_id``; return its 0-based position."""
        text = encode_entry(entry)
        log, kinds = self.log_key(task_id, kind), self.kinds_key(task_id)
        with self._store(f"append to {task_id}/{kind}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.rpush(log, text)
                pipe.sadd(kinds, kind)
                self._touch(pipe, task_id, log, kinds)
                replies = await pipe.execute()
        return int(replies[0]) - 1

    async def entries(self, task_id: str, kind: str, start: int = 0) -> list[dict[str, Any]]:
        """Entries of the ``kind`` log of ``task_id`` from position ``start`` on, in append order."""
        with self._store(f"read {task_id}/{kind}"):
            raw = await self._redis.lrange(self.log_key(task_id, kind), max(start, 0), -1)
        return [decode(r, f"{task_id}/{kind}") for r in raw]

    async def set_final(self, task_id: str, answer: dict[str, Any]) -> None:
        """Record (or replace) the team's final answer, at every configured final key."""
        text = encode_entry(answer)
        with self._store(f"set the final answer of {task_id}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                for key in self.final_keys(task_id):
                    pipe.set(key, text, ex=self.config.ttl_seconds)
                self._touch(pipe, task_id)
                await pipe.execute()

    async def get_final(self, task_id: str) -> dict[str, Any] | None:
        """The final answer of ``task_id``, or None when there is none yet."""
        key = self.final_keys(task_id)[0]
        with self._store(f"read the final answer of {task_id}"):
            raw = await self._redis.get(key)
        return None if raw is None else decode(raw, key)

    async def put(self, task_id: str, key: str, value: Any, *, overwrite: bool = True) -> bool:
        """Store a small JSON value under ``key`` for ``task_id``.

        With ``overwrite=False`` an existing value is kept (atomically: of several racing writers
        exactly one wins). Returns whether the value was written.
        """
        text, hkey = encode(value), self.values_key(task_id)
        with self._store(f"put {task_id}/{key}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                if overwrite:
                    pipe.hset(hkey, key, text)
                else:
                    pipe.hsetnx(hkey, key, text)
                self._touch(pipe, task_id, hkey)
                replies = await pipe.execute()
        return overwrite or bool(replies[0])

    async def get(self, task_id: str, key: str, default: Any = None) -> Any:
        """The value stored under ``key`` for ``task_id``, or ``default``."""
        with self._store(f"get {task_id}/{key}"):
            raw = await self._redis.hget(self.values_key(task_id), key)
        return default if raw is None else decode(raw, f"{task_id}/{key}")

    async def tasks(self) -> list[str]:
        """Ids of the tasks that have anything stored, sorted (with a TTL: written within it)."""
        with self._store("list tasks"):
            if self.config.ttl_seconds:
                await self._redis.zremrangebyscore(
                    self.tasks_key, "-inf", f"({time.time() - self.config.ttl_seconds}"
                )
            raw = await self._redis.zrange(self.tasks_key, 0, -1)
        return sorted(_text(r) for r in raw)

    async def kinds(self, task_id: str) -> list[str]:
        """Kinds of log ``task_id`` has entries in, sorted."""
        with self._store(f"list the kinds of {task_id}"):
            raw = await self._redis.smembers(self.kinds_key(task_id))
        return sorted(_text(r) for r in raw)

    async def delete(self, task_id: str) -> None:
        """Forget everything stored for ``task_id`` (meant for finished tasks)."""
        kinds = await self.kinds(task_id)
        keys = [self.log_key(task_id, k) for k in kinds]
        keys += [self.kinds_key(task_id), self.values_key(task_id), *self.final_keys(task_id)]
        with self._store(f"delete {task_id}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.delete(*keys)
                pipe.zrem(self.tasks_key, task_id)
                await pipe.execute()

    async def release(self, task_id: str) -> None:
        """Keep ``task_id``: other processes may read it (``memdoor trace``, a seed client); ``ttl_seconds``
        or :meth:`delete` ends it."""

    async def ping(self) -> None:
        """Check that Redis answers; MemoryStoreError if it does not."""
        with self._store("ping"):
            await self._redis.ping()

    async def aclose(self) -> None:
        """Close the connections."""
        with self._store("close"):
            await self._redis.aclose()

    async def __aenter__(self) -> RedisMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
