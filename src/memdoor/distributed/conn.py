"""Redis connections for distributed mode: opening, backing off when Redis is down, consumer groups,
and the registry of live agents.

Whether Redis is down is decided by the exception's type (:data:`REDIS_DOWN`), never by its text.
A Redis URL reaches logs and error messages only through :func:`memdoor.core.net.redact_url` /
:func:`describe` (no password). TLS: a ``rediss://`` URL, with ``ssl_ca_certs=FILE`` in its query
(or :func:`with_ca`) when the server's certificate is signed by a private CA.
"""

from __future__ import annotations

import os
import random
import ssl
from typing import Any
from urllib.parse import quote

import redis.asyncio as aioredis
from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memdoor.core.errors import MemoryStoreError, RedisTLSError, UsageError
from memdoor.core.net import redact_url, scrub
from memdoor.distributed.jobs import Keys
from memdoor.problems.jsonl import parse_json

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
        raise UsageError(f"bad Redis URL {redact_url(url)!r}: {scrub(str(e), url)}") from None


def with_ca(url: str, ca_file: str | None) -> str:
    """``url`` told to trust the CA certificates in ``ca_file`` (``ssl_ca_certs`` in its query, which
    redis-py reads), for ``--redis-ca``. UsageError unless the URL is ``rediss://`` and the file is readable."""
    if not ca_file:
        return url
    if not url.startswith("rediss://"):
        raise UsageError(f"--redis-ca needs a rediss:// (TLS) URL, not {redact_url(url)!r}")
    if not os.path.isfile(ca_file) or not os.access(ca_file, os.R_OK):
        raise UsageError(f"--redis-ca: cannot read the CA file {ca_file!r}")
    if "ssl_ca_certs=" in url:
        raise UsageError("give the CA once: --redis-ca, or ssl_ca_certs= in the URL")
    return f"{url}{'&' if '?' in url else '?'}ssl_ca_certs={quote(ca_file, safe='/')}"


def describe(error: BaseException, url: str) -> str:
    """``Type: message`` of an error about the Redis at ``url``, with no secret of the URL in it."""
    return f"{type(error).__name__}: {scrub(str(error), url)}"


def refusal(error: BaseException, url: str) -> MemoryStoreError | None:
    """The error to stop with at once when a connection error will not get better by waiting — Redis
    refused the credentials (AuthenticationError), or the server's TLS certificate did not verify
    against the CA (RedisTLSError) — decided by type; None for an error worth retrying."""
    if isinstance(error, AuthenticationError):
        return MemoryStoreError(f"Redis at {redact_url(url)} refused the credentials: {describe(error, url)}")
    seen: BaseException | None = error
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            return RedisTLSError(
                f"Redis at {redact_url(url)}: the server's TLS certificate was refused "
                f"({seen.verify_message or 'verify failed'}; check --redis-ca / ssl_ca_certs)"
            )
        seen = seen.__cause__ or seen.__context__
    return None


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
    """A name read from Redis as text (UnicodeDecodeError when it is not UTF-8)."""
    return raw.decode() if isinstance(raw, bytes) else raw


def shown(raw: bytes | str, limit: int = 200) -> str:
    r"""Text a Redis peer wrote (a key name, an id, a registration field), fit for one log line: bytes
    that are not UTF-8 written ``\xNN``, control and other unprintable characters escaped (``\x1b``,
    ``\n``), at most ``limit`` characters. Only the first ``limit`` characters (``4 * limit`` bytes)
    are read, however long ``raw`` is."""
    if isinstance(raw, bytes):
        cut = len(raw) > 4 * limit  # a character is at most 4 bytes of UTF-8
        raw = raw[: 4 * limit].decode("utf-8", "backslashreplace")
    else:
        raw = raw if isinstance(raw, str) else str(raw)
        cut = False
    if len(raw) > limit:
        raw, cut = raw[:limit], True
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in raw)
    return out if len(out) <= limit and not cut else out[: limit - 1] + "…"


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
    """Registered agents whose heartbeat is alive: agent id → registration (``{}`` for one that is not a
    JSON object; a field name that is not UTF-8 is skipped). Entries of dead agents are removed (a live
    worker registers again with every heartbeat)."""
    raw = await r.hgetall(keys.agents)
    if not raw:
        return {}
    items = []
    for k, v in raw.items():
        try:
            items.append((text(k), v))
        except UnicodeDecodeError:
            continue  # not a name any worker registers under
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
            info = parse_json(value)
        except ValueError:  # not JSON, not UTF-8, or nested too deeply
            info = {}
        live[agent_id] = info if isinstance(info, dict) else {}
    if dead:
        await r.hdel(keys.agents, *dead)
    return live
