"""What only the Redis backend does: many processes, the seed protocol's keys, TTLs, failures."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import textwrap
import uuid

import pytest

from memdoor.core.errors import MemoryStoreError
from memdoor.memory.redis_memory import RedisMemory
from redis_helpers import start_redis_server

redis = pytest.importorskip("redis")


@pytest.fixture
def prefix(redis_url):
    prefix = f"memdoor-test-{uuid.uuid4().hex}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{prefix}*", count=500))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def raw(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


WRITER = textwrap.dedent(
    """
    import asyncio, os, sys
    from memdoor.memory.redis_memory import RedisMemory

    async def main(url, prefix, proc, coroutines, per):
        mem = RedisMemory(url, prefix=prefix)
        async def one(c):
            return [await mem.append("shared", "drafts", {"proc": proc, "c": c, "i": i, "pid": os.getpid()})
                    for i in range(per)]
        got = await asyncio.gather(*(one(c) for c in range(coroutines)))
        await mem.aclose()
        print(" ".join(str(p) for ps in got for p in ps))

    url, prefix, proc, coroutines, per = sys.argv[1:]
    asyncio.run(main(url, prefix, int(proc), int(coroutines), int(per)))
    """
)


def test_appends_from_many_processes_all_land(redis_url, prefix):
    procs, coroutines, per = 4, 5, 20
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, redis_url, prefix, str(p), str(coroutines), str(per)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(procs)
    ]
    positions = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        positions += [int(x) for x in out.split()]
    total = procs * coroutines * per
    assert sorted(positions) == list(range(total))

    async def read():
        mem = RedisMemory(redis_url, prefix=prefix)
        try:
            return await mem.entries("shared", "drafts")
        finally:
            await mem.aclose()

    entries = asyncio.run(read())
    assert len(entries) == total
    assert len({e["pid"] for e in entries}) == procs
    keys = {(e["proc"], e["c"], e["i"]) for e in entries}
    assert len(keys) == total


async def test_final_answer_at_the_seed_protocol_key(redis_url, prefix, raw):
    task = f"seed-{uuid.uuid4().hex}"
    mem = RedisMemory(redis_url, prefix=prefix, final_key="memory:{task}")
    try:
        await mem.set_final(task, {"id": task, "code": "def f(): return 1"})
        assert json.loads(raw.get(f"memory:{task}").decode()) == {"id": task, "code": "def f(): return 1"}
        assert await mem.get_final(task) == {"id": task, "code": "def f(): return 1"}
        assert raw.get(f"{prefix}final:{task}") is None  # instead of, not besides, the default key
        await mem.delete(task)
        assert raw.get(f"memory:{task}") is None
    finally:
        raw.delete(f"memory:{task}")
        await mem.aclose()


async def test_final_answer_mirrored_to_a_second_key(redis_url, prefix, raw):
    task = f"seed-{uuid.uuid4().hex}"
    mem = RedisMemory(redis_url, prefix=prefix, final_mirror_key="memory:{task}")
    try:
        await mem.set_final(task, {"answer": 42})
        assert json.loads(raw.get(f"memory:{task}")) == {"answer": 42}
        assert json.loads(raw.get(f"{prefix}final:{task}")) == {"answer": 42}
        assert mem.final_keys(task) == [f"{prefix}final:{task}", f"memory:{task}"]
    finally:
        raw.delete(f"memory:{task}")
        await mem.aclose()


async def test_ttl_applies_to_every_key_of_a_task(redis_url, prefix, raw):
    mem = RedisMemory(redis_url, prefix=prefix, ttl_seconds=600)
    try:
        await mem.append("t", "drafts", {"v": 1})
        await mem.put("t", "k", 1)
        await mem.set_final("t", {"v": 2})
        for key in (
            mem.log_key("t", "drafts"),
            mem.kinds_key("t"),
            mem.values_key("t"),
            *mem.final_keys("t"),
        ):
            assert 0 < raw.ttl(key) <= 600, key
        assert await mem.tasks() == ["t"]
    finally:
        await mem.aclose()


async def test_without_ttl_keys_persist(redis_url, prefix, raw):
    mem = RedisMemory(redis_url, prefix=prefix)
    try:
        await mem.append("t", "drafts", {"v": 1})
        assert raw.ttl(mem.log_key("t", "drafts")) == -1
    finally:
        await mem.aclose()


async def test_tasks_expired_by_ttl_leave_the_listing(redis_url, prefix, raw):
    mem = RedisMemory(redis_url, prefix=prefix, ttl_seconds=60)
    try:
        await mem.append("fresh", "drafts", {"v": 1})
        raw.zadd(mem.tasks_key, {"stale": 1.0})  # last written in 1970
        assert await mem.tasks() == ["fresh"]
    finally:
        await mem.aclose()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_unreachable_redis_raises_memory_store_error():
    mem = RedisMemory(f"redis://127.0.0.1:{_closed_port()}/0", retries=1, connect_timeout=2)
    try:
        with pytest.raises(MemoryStoreError, match="append"):
            await mem.append("t", "drafts", {"v": 1})
        with pytest.raises(MemoryStoreError):
            await mem.entries("t", "drafts")
        with pytest.raises(MemoryStoreError):
            await mem.get_final("t")
        with pytest.raises(MemoryStoreError):
            await mem.ping()
    finally:
        await mem.aclose()


async def test_garbage_in_the_store_is_a_memory_store_error(redis_url, prefix, raw):
    mem = RedisMemory(redis_url, prefix=prefix)
    try:
        raw.rpush(mem.log_key("t", "drafts"), b"\xff not json")
        with pytest.raises(MemoryStoreError, match="unreadable"):
            await mem.entries("t", "drafts")
        raw.set(mem.final_keys("t")[0], b"{broken")
        with pytest.raises(MemoryStoreError):
            await mem.get_final("t")
        raw.set(mem.log_key("t", "votes"), b"a string, not a list")
        with pytest.raises(MemoryStoreError) as caught:
            await mem.append("t", "votes", {"v": 1})
        assert isinstance(caught.value.__cause__, redis.exceptions.ResponseError)
    finally:
        await mem.aclose()


async def test_bad_url_is_a_memory_store_error():
    with pytest.raises(MemoryStoreError):
        RedisMemory("redis://127.0.0.1:notaport/0")


async def test_a_restarted_redis_fails_clearly_then_the_same_memory_reconnects():
    port = _closed_port()
    server, _ = start_redis_server(port)
    mem = RedisMemory(f"redis://127.0.0.1:{port}/0", retries=1, connect_timeout=2)
    try:
        assert await mem.append("t", "drafts", {"v": 1}) == 0
        server.terminate()
        server.wait(30)
        with pytest.raises(MemoryStoreError):
            await mem.append("t", "drafts", {"v": 2})
        server, _ = start_redis_server(port)
        assert await mem.append("t", "drafts", {"v": 3}) == 0  # no persistence: a fresh, empty store
        assert await mem.entries("t", "drafts") == [{"v": 3}]
    finally:
        await mem.aclose()
        server.terminate()
        server.wait(30)


async def test_errors_never_show_the_password():
    secret = "Hush-93b1e7-pw"
    url = f"redis://:{secret}@127.0.0.1:{_closed_port()}/0"
    mem = RedisMemory(url, retries=0, connect_timeout=2)
    try:
        with pytest.raises(MemoryStoreError) as caught:
            await mem.append("t", "drafts", {"v": 1})
        assert secret not in str(caught.value) and "redis://:***@127.0.0.1:" in str(caught.value)
    finally:
        await mem.aclose()
    # a password with an unescaped "/": the URL parser complains about a piece of it
    with pytest.raises(MemoryStoreError) as caught:
        RedisMemory("redis://:Hush9/93b1e7-pw@127.0.0.1:6379/0")
    assert "Hush9" not in str(caught.value) and "93b1e7-pw" not in str(caught.value)
    assert caught.value.__cause__ is None
