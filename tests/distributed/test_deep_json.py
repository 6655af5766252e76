"""A value nested too deeply for Python's JSON decoder (``[`` * 100,000: RecursionError, not ValueError)
planted by another Redis client, at every key a worker or lead parses: it is unreadable, like any other
value that is not JSON, and stops nothing (a real Redis of the test's own; a real worker for the keys it
reads at start)."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis.asyncio as aioredis
from dist_helpers import ISSUE_PROMPT, PALINDROME_ANSWER, WorkerProc, scripted_file, wait_for, work_tally

from memdoor.core.errors import ForgedRecord, ProblemFormatError
from memdoor.distributed.conn import live_agents
from memdoor.distributed.jobs import Keys
from memdoor.distributed.seedtask import parse_task, task_problem
from memdoor.distributed.signing import ANSWER, RESULT, TeamKey
from memdoor.distributed.worker import _field

DEEP = "[" * 100_000
KEY_TEXT = "team-key-deep-json-5b1f09c2"
KEY = TeamKey(KEY_TEXT.encode())
TESTS = [{"input": ["abba"], "output": True}, {"input": ["abc"], "output": False}]


def test_a_registration_nested_too_deeply_counts_as_an_empty_one(server, r):
    r.hset("memdoor:agents", "ghost", DEEP)
    r.set("memdoor:agent:ghost", "{}")
    r.hset("memdoor:agents", "w2", json.dumps({"role": "answer"}))
    r.set("memdoor:agent:w2", "{}")

    async def read() -> dict:
        client = aioredis.Redis(host="127.0.0.1", port=server.port)
        try:
            return await live_agents(client, Keys())
        finally:
            await client.aclose()

    assert asyncio.run(read()) == {"ghost": {}, "w2": {"role": "answer"}}


def test_a_heartbeat_nested_too_deeply_has_no_fields():
    assert _field(DEEP, "host") is None
    assert _field(DEEP.encode(), "instance") is None


@pytest.mark.parametrize("kind", [RESULT, ANSWER])
def test_a_record_nested_too_deeply_is_unreadable_not_a_crash(kind):
    with pytest.raises(ForgedRecord, match="unreadable"):
        KEY.open(kind, "memdoor:result:run1:abc:0", DEEP)
    assert not KEY.vouches(kind, "memdoor:result:run1:abc:0", DEEP.encode())


def test_a_task_nested_too_deeply_is_a_format_error():
    with pytest.raises(ProblemFormatError, match="not JSON"):
        parse_task("t1", DEEP, key="task:t1")
    string_input = json.dumps({"id": "t2", "prompt": ISSUE_PROMPT, "tests": [{"input": DEEP, "output": 1}]})
    task = parse_task("t2", string_input, key="task:t2")
    with pytest.raises(ProblemFormatError, match="JSON lines"):
        task_problem(task, key="task:t2")


def test_a_work_log_entry_nested_too_deeply_is_not_counted(server, r):
    keys = Keys()
    entry = json.dumps({"agent": "w1", "ok": True})
    r.rpush(keys.work("run1"), entry, DEEP, entry)
    assert work_tally(server.port, "run1") == {"w1": 2}


def test_a_worker_serves_with_deep_values_at_its_heartbeat_and_a_registration(tmp_path, server, r):
    r.set("memdoor:agent:w1", DEEP, ex=600)  # the worker's own heartbeat key, read at start
    r.hset("memdoor:agents", "ghost", DEEP)  # a live registration, read at every task scan
    r.set("memdoor:agent:ghost", "{}", ex=600)
    spec = scripted_file(tmp_path / "w1.json", [PALINDROME_ANSWER], delay=0.1)
    worker = WorkerProc(tmp_path, "w1", spec, server.url, env={"MEMDOOR_TEAM_KEY": KEY_TEXT})
    try:
        wait_for(lambda: "serving" in worker.log, 120, "w1 serving", procs=[worker])
        r.set("task:t1", json.dumps({"id": "t1", "prompt": ISSUE_PROMPT, "tests": TESTS, "agents": 1}))
        raw = wait_for(
            lambda: (got := r.get("memory:t1")) is not None and KEY.vouches(ANSWER, "memory:t1", got) and got,
            120,
            "a signed answer",
            procs=[worker],
        )
        assert KEY.open(ANSWER, "memory:t1", raw)["status"] == "done"
        assert worker.proc.poll() is None, worker.log[-3000:]
    finally:
        assert worker.stop() == 0, worker.log[-3000:]
