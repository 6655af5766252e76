"""The same behaviour from both memory backends: in-process and a real Redis server."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from memdoor.core.protocols import Memory
from memdoor.memory import open_memory
from memdoor.memory.inproc import InProcMemory


async def _drop_prefix(url: str, prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture(params=["inproc", "redis"])
async def memory(request):
    if request.param == "inproc":
        mem = InProcMemory()
        yield mem
        await mem.aclose()
        return
    url = request.getfixturevalue("redis_url")
    prefix = f"memdoor-test-{uuid.uuid4().hex}:"
    mem = open_memory(url, prefix=prefix)
    try:
        yield mem
    finally:
        await mem.aclose()
        await _drop_prefix(url, prefix)


def test_fits_the_protocol(memory):
    assert isinstance(memory, Memory)


async def test_append_returns_positions_and_entries_keep_order(memory):
    positions = [
        await memory.append("t1", "drafts", {"agent": f"a{i}", "code": f"x = {i}"}) for i in range(4)
    ]
    assert positions == [0, 1, 2, 3]
    got = await memory.entries("t1", "drafts")
    assert [e["agent"] for e in got] == ["a0", "a1", "a2", "a3"]
    assert [e["agent"] for e in await memory.entries("t1", "drafts", start=2)] == ["a2", "a3"]
    assert await memory.entries("t1", "drafts", start=9) == []


async def test_tasks_and_kinds_are_isolated(memory):
    await memory.append("t1", "drafts", {"v": 1})
    await memory.append("t1", "reviews", {"v": 2})
    await memory.append("t2", "drafts", {"v": 3})
    assert await memory.entries("t1", "drafts") == [{"v": 1}]
    assert await memory.entries("t1", "reviews") == [{"v": 2}]
    assert await memory.entries("t2", "drafts") == [{"v": 3}]
    assert await memory.entries("t2", "reviews") == []
    assert await memory.entries("nope", "drafts") == []
    assert await memory.kinds("t1") == ["drafts", "reviews"]
    assert await memory.kinds("t2") == ["drafts"]
    assert await memory.tasks() == ["t1", "t2"]


async def test_separators_in_ids_cannot_collide(memory):
    await memory.append("a:log:b", "c", {"who": "task a:log:b"})
    await memory.append("a", "b:log:c", {"who": "task a"})
    await memory.append("50%", "x", {"who": "percent"})
    assert await memory.entries("a:log:b", "c") == [{"who": "task a:log:b"}]
    assert await memory.entries("a", "b:log:c") == [{"who": "task a"}]
    assert await memory.entries("50%", "x") == [{"who": "percent"}]
    assert await memory.kinds("a") == ["b:log:c"]


async def test_final_answer(memory):
    assert await memory.get_final("t1") is None
    await memory.set_final("t1", {"code": "print(1)", "agent": "a0"})
    assert await memory.get_final("t1") == {"code": "print(1)", "agent": "a0"}
    await memory.set_final("t1", {"code": "print(2)"})
    assert await memory.get_final("t1") == {"code": "print(2)"}
    assert await memory.get_final("t2") is None
    assert "t1" in await memory.tasks()


async def test_json_round_trip(memory):
    entry = {
        "text": 'naïve ünïcode — 日本語 \n\t"quotes"',
        "nested": {"list": [1, 2.5, None, True], "tuple": (1, 2)},
        "big": 10**30,
        "neg": -0.125,
    }
    await memory.append("t", "drafts", entry)
    (got,) = await memory.entries("t", "drafts")
    assert got["text"] == entry["text"]
    assert got["nested"] == {"list": [1, 2.5, None, True], "tuple": [1, 2]}
    assert got["big"] == 10**30 and got["neg"] == -0.125
    entry["text"] = "changed after append"
    assert (await memory.entries("t", "drafts"))[0]["text"] != "changed after append"


async def test_bad_entries_are_refused_and_nothing_lands(memory):
    with pytest.raises(TypeError):
        await memory.append("t", "drafts", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        await memory.append("t", "drafts", {"obj": object()})
    with pytest.raises(ValueError):
        await memory.append("t", "drafts", {"nan": float("nan")})
    assert await memory.entries("t", "drafts") == []


async def test_put_and_get_values(memory):
    assert await memory.get("t", "round") is None
    assert await memory.get("t", "round", 0) == 0
    assert await memory.put("t", "round", 1) is True
    assert await memory.put("t", "round", {"n": 2}) is True
    assert await memory.get("t", "round") == {"n": 2}
    assert await memory.put("t", "round", 3, overwrite=False) is False
    assert await memory.get("t", "round") == {"n": 2}
    assert await memory.put("t", "owner", "a1", overwrite=False) is True
    assert await memory.get("t", "owner") == "a1"
    assert await memory.get("other", "owner") is None


async def test_only_one_racing_put_without_overwrite_wins(memory):
    results = await asyncio.gather(
        *(memory.put("t", "claim", f"agent{i}", overwrite=False) for i in range(20))
    )
    assert sum(results) == 1
    winner = results.index(True)
    assert await memory.get("t", "claim") == f"agent{winner}"


async def test_concurrent_appends_all_land_with_unique_positions(memory):
    writers, per_writer = 12, 25

    async def writer(w: int) -> list[int]:
        out = []
        for i in range(per_writer):
            out.append(await memory.append("t", "drafts", {"w": w, "i": i}))
            await asyncio.sleep(0)
        return out

    positions = [p for ps in await asyncio.gather(*(writer(w) for w in range(writers))) for p in ps]
    total = writers * per_writer
    assert sorted(positions) == list(range(total))
    got = await memory.entries("t", "drafts")
    assert len(got) == total
    assert {(e["w"], e["i"]) for e in got} == {(w, i) for w in range(writers) for i in range(per_writer)}
    for w in range(writers):  # each writer's own entries keep their order
        assert [e["i"] for e in got if e["w"] == w] == list(range(per_writer))


async def test_delete_forgets_a_task_only(memory):
    await memory.append("t1", "drafts", {"v": 1})
    await memory.append("t1", "votes", {"v": 2})
    await memory.put("t1", "k", 1)
    await memory.set_final("t1", {"code": ""})
    await memory.append("t2", "drafts", {"v": 3})
    await memory.delete("t1")
    assert await memory.entries("t1", "drafts") == []
    assert await memory.entries("t1", "votes") == []
    assert await memory.get("t1", "k") is None
    assert await memory.get_final("t1") is None
    assert await memory.kinds("t1") == []
    assert await memory.tasks() == ["t2"]
    assert await memory.entries("t2", "drafts") == [{"v": 3}]
    assert await memory.append("t1", "drafts", {"v": 4}) == 0


async def test_release_forgets_a_finished_task_only_where_no_other_process_can_read_it(memory):
    await memory.append("t1", "trace", {"v": 1})
    await memory.set_final("t1", {"code": ""})
    await memory.append("t2", "drafts", {"v": 2})
    await memory.release("t1")
    if isinstance(memory, InProcMemory):  # held in this process only: a server's memory must not grow
        assert await memory.tasks() == ["t2"] and await memory.get_final("t1") is None
    else:  # shared: other processes (memdoor trace, a seed client) may still read it
        assert await memory.tasks() == ["t1", "t2"] and await memory.get_final("t1") == {"code": ""}
    assert await memory.entries("t2", "drafts") == [{"v": 2}]
