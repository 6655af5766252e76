"""Redis connections for distributed mode: opening, backing off when Redis is down, consumer groups,
and the registry of live agents.

Whether Redis is down is decided by the exception's type (:data:`REDIS_DOWN`), never by its text.
"""

from __future__ import annotations

import json
import random
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memdoor.distributed.jobs import Keys
from memdoor.errors import UsageError

REDIS_DOWN: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError)
"""Errors that mean "Redis cannot be reached right now" (including a server still loading its data)."""


def connect(url: str, *, timeout: float = 30.0, connect_timeout: float = 5.0) -> aioredis.Redis:
    """A ``redis.asyncio`` client for ``url``. Commands that block (XREADGROUP, BLPOP) must block for
    less than ``timeout`` seconds. Raises UsageError for a URL that cannot be parsed."""
    try:
        return aioredis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=connect_timeout, health_check_interval=30
        )
    except ValueError as e:
        raise UsageError(f"bad Redis URL {url!r}: {e}") from None


class Backoff:
    """Exponential backoff with jitter: ``base``, doubling, at most ``cap`` seconds; ``reset`` after a success."""

    def __init__(self, base: float = 0.1, cap: float = 5.0, rng: random.Random | None = None):
        self.base, self.cap = base, cap
        self._n = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        delay = min(self.cap, self.base * 2**self._n)
        self._n += 1
        return delay * (0.5 + self._rng.random() / 2)

    def reset(self) -> None:
        self._n = 0

    @property
    def failures(self) -> int:
        return self._n


def text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


async def group_exists(r: aioredis.Redis, stream: str, group: str) -> bool:
    if not await r.exists(stream):
        return False
    groups = await r.xinfo_groups(stream)
    return any(text(g["name"]) == group for g in groups)


async def ensure_group(r: aioredis.Redis, stream: str, group: str) -> bool:
    """Make sure ``group`` exists on ``stream`` (creating both if needed). Returns True if it was
    created now. Decides by looking, not by parsing the error of a racing creator."""
    if await group_exists(r, stream, group):
        return False
    try:
        await r.xgroup_create(stream, group, id="0", mkstream=True)
    except ResponseError:
        if await group_exists(r, stream, group):
            return False  # another worker created it first
        raise
    return True


async def live_agents(r: aioredis.Redis, keys: Keys) -> dict[str, dict[str, Any]]:
    """Registered agents whose heartbeat is alive: agent id → registration. Entries of dead agents are
    removed (a live worker registers again with every heartbeat)."""
    raw = await r.hgetall(keys.agents)
    if not raw:
        return {}
    items = [(text(k), v) for k, v in raw.items()]
    async with r.pipeline(transaction=False) as pipe:
        for agent_id, _ in items:
            pipe.exists(keys.heartbeat(agent_id))
        alive = await pipe.execute()
    live: dict[str, dict[str, Any]] = {}
    dead: list[str] = []
    for (agent_id, value), is_alive in zip(items, alive, strict=True):
        if not is_alive:
            dead.append(agent_id)
            continue
        try:
            info = json.loads(value)
        except ValueError:
            info = {}
        live[agent_id] = info if isinstance(info, dict) else {}
    if dead:
        await r.hdel(keys.agents, *dead)
    return live
