"""Shared team memory: per task, append-only logs by kind, small values and a final answer.

``open_memory(None)`` or ``open_memory("inproc")`` gives the in-process store;
``open_memory("redis://host:6379/0")`` a Redis store shared across processes (the ``redis`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdoor.core.errors import UsageError
from memdoor.core.net import redact_url

if TYPE_CHECKING:
    from memdoor.core.protocols import Memory

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def open_memory(url: str | None = None, **options: Any) -> Memory:
    """The memory named by ``url``: None/``"inproc"`` → InProcMemory, ``redis://...`` → RedisMemory.

    ``options`` go to RedisMemory (see :class:`~memdoor.memory.redis_memory.RedisMemoryConfig`:
    ``prefix``, ``ttl_seconds``, ``final_key``, ``final_mirror_key``, timeouts, retries).
    """
    if url is None or url == "inproc":
        if options:
            raise UsageError(f"in-process memory takes no options (got {', '.join(sorted(options))})")
        from memdoor.memory.inproc import InProcMemory

        return InProcMemory()
    if url.startswith(REDIS_SCHEMES):
        try:
            from memdoor.memory.redis_memory import RedisMemory
        except ModuleNotFoundError as e:
            if e.name != "redis" and not (e.name or "").startswith("redis."):
                raise
            raise UsageError("Redis memory needs the redis package: pip install 'memdoor[redis]'") from e
        return RedisMemory(url, **options)
    raise UsageError(f"unknown memory {redact_url(url)!r}: use 'inproc' or a redis:// URL")
