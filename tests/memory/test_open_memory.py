"""Choosing a memory backend by name or URL."""

from __future__ import annotations

import pytest

from memdoor.core.errors import UsageError
from memdoor.core.registry import load
from memdoor.memory import open_memory
from memdoor.memory.inproc import InProcMemory
from memdoor.memory.redis_memory import RedisMemory


async def test_default_and_inproc_are_in_process():
    assert isinstance(open_memory(None), InProcMemory)
    assert isinstance(open_memory("inproc"), InProcMemory)
    assert open_memory() is not open_memory()  # no shared global store


async def test_redis_url_gives_redis_memory():
    mem = open_memory("redis://127.0.0.1:1/3", prefix="p:", ttl_seconds=60)
    try:
        assert isinstance(mem, RedisMemory)
        assert mem.config.prefix == "p:" and mem.config.ttl_seconds == 60
    finally:
        await mem.aclose()


def test_unknown_memory_and_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match="unknown memory"):
        open_memory("memcached://x")
    with pytest.raises(UsageError, match="unknown memory") as caught:
        open_memory("http://:Hush-5e1d-pw@10.0.0.5:6379/0")  # never the password
    assert "Hush-5e1d-pw" not in str(caught.value) and "http://:***@10.0.0.5" in str(caught.value)
    with pytest.raises(UsageError):
        open_memory("inproc", prefix="x")
    with pytest.raises(UsageError, match="ttl_seconds"):
        open_memory("redis://127.0.0.1:6379/0", ttl_seconds=-5)
    with pytest.raises(UsageError, match="colour"):
        open_memory("redis://127.0.0.1:6379/0", colour="blue")


def test_registry_names_resolve():
    assert load("memory", "inproc") is InProcMemory
    assert load("memory", "redis") is RedisMemory
