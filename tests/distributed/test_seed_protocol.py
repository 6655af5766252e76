"""The seed client protocol with three real `memdoor worker` processes and a real Redis.

A client sets ``task:<id>`` and reads ``memory:<id>``; workers run the scripted model (control flow
only: the answers are fixed, so nothing here measures quality).
"""

from __future__ import annotations

import json
import time

import pytest
import redis
from dist_helpers import ISSUE_PROMPT, PALINDROME_ANSWER, RedisServer, WorkerProc, scripted_file, wait_for


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def workers(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("workers")
    spec = scripted_file(tmp / "answers.json", [PALINDROME_ANSWER], delay=0.3)
    procs = [WorkerProc(tmp, f"w{i}", spec, server.url, "--heartbeat-ttl", "6") for i in (1, 2, 3)]
    r = redis.Redis(host="127.0.0.1", port=server.port)
    wait_for(lambda: r.hlen("memdoor:agents") == 3, 120, "three registered workers", procs=procs)
    yield procs
    codes = [p.stop() for p in procs]
    assert codes == [0, 0, 0], "workers must exit 0 on SIGTERM"


def read_answer(r: redis.Redis, task_id: str, procs, timeout: float = 120) -> dict:
    raw = wait_for(lambda: r.get(f"memory:{task_id}"), timeout, f"memory:{task_id}", procs=procs)
    return json.loads(raw)


def test_the_issue_snippet_works_with_polling(server, workers):
    # The issue's client, verbatim except the port and polling instead of sleep(30).
    r = redis.Redis(host="localhost", port=server.port)
    problem = {"id": "lcbench_hard_001", "prompt": ISSUE_PROMPT}
    r.set(f"task:{problem['id']}", json.dumps(problem))
    deadline = time.monotonic() + 120
    while r.get(f"memory:{problem['id']}") is None and time.monotonic() < deadline:
        time.sleep(0.2)
    text = r.get(f"memory:{problem['id']}").decode()
    print(text)

    answer = json.loads(text)
    assert answer["status"] == "done", answer
    assert answer["id"] == "lcbench_hard_001"
    assert "def is_palindrome" in answer["code"] and answer["func_name"] == "is_palindrome"
    assert answer["answer"].startswith("```python")
    assert len(answer["agents"]) == 3  # one agent per live worker
    # no tests in the task: the team wrote test inputs and voted by behaviour on them
    assert answer["tests"]["source"] == "team" and answer["tests"]["count"] == 3
    assert answer["tests"]["expected_outputs"] is False
    assert answer["jobs"] == answer["calls"] == 4  # 1 test-writing call + 3 drafts, all in the ledger
    events = [json.loads(e) for e in r.lrange(answer["trace"], 0, -1)]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "start" and "graded" in kinds
    # the work spread over several workers, recorded per run and listed in the answer
    assert sum(answer["workers"].values()) == 4 and len(answer["workers"]) >= 2
    assert set(answer["workers"]) <= {"w1", "w2", "w3"}


def test_workers_register_with_heartbeats(server, workers):
    r = redis.Redis(host="127.0.0.1", port=server.port)
    agents = {k.decode(): json.loads(v) for k, v in r.hgetall("memdoor:agents").items()}
    assert set(agents) == {"w1", "w2", "w3"}
    assert {a["role"] for a in agents.values()} == {"all"}
    for agent_id in agents:
        ttl = r.pttl(f"memdoor:agent:{agent_id}")
        assert 0 < ttl <= 6000


def test_task_with_tests_strategy_and_team_size(server, workers):
    r = redis.Redis(host="127.0.0.1", port=server.port)
    task = {
        "id": "with-tests",
        "prompt": ISSUE_PROMPT,
        "tests": [{"input": ["abba"], "output": True}, {"input": ["abc"], "output": False}],
        "strategy": "parallel",
        "agents": 2,
    }
    r.set("task:with-tests", json.dumps(task))
    answer = read_answer(r, "with-tests", workers)
    assert answer["status"] == "done", answer
    assert answer["strategy"] == "parallel:2" and len(answer["agents"]) == 2
    assert answer["tests"] == {
        "source": "task",
        "count": 2,
        "expected_outputs": True,
        "inputs": ['"abba"', '"abc"'],
    }
    assert answer["public"] == {"status": "passed", "passed": 2, "total": 2}
    assert answer["jobs"] == 2  # no test-writing call when the task brings tests


def test_assert_tests_run_against_the_answer(server, workers):
    r = redis.Redis(host="127.0.0.1", port=server.port)
    wrong = "assert is_palindrome('abba')\nassert is_palindrome('abc')"  # the second is false
    r.set("task:asserts", json.dumps({"id": "asserts", "prompt": ISSUE_PROMPT, "tests": wrong, "agents": 1}))
    answer = read_answer(r, "asserts", workers)
    assert answer["status"] == "done"
    assert answer["tests"]["source"] == "task" and answer["public"]["status"] != "passed"


@pytest.mark.parametrize(
    ("task_id", "raw", "field"),
    [
        ("not-json", b"{this is not json", None),
        ("a-list", json.dumps(["id", "prompt"]).encode(), None),
        ("no-prompt", json.dumps({"id": "no-prompt"}).encode(), "prompt"),
        ("bad-id", json.dumps({"id": "another", "prompt": "x"}).encode(), "id"),
        ("empty-prompt", json.dumps({"id": "empty-prompt", "prompt": ""}).encode(), "prompt"),
    ],
)
def test_malformed_tasks_get_an_error_object(server, workers, task_id, raw, field):
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.set(f"task:{task_id}", raw)
    answer = read_answer(r, task_id, workers)
    assert answer["status"] == "error" and answer["id"] == task_id
    assert answer["error_type"] == "ProblemFormatError"
    assert f"task:{task_id}" in answer["error"]
    if field:
        assert repr(field) in answer["error"]


def test_a_task_key_of_the_wrong_type_is_an_error_and_workers_keep_serving(server, workers):
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.hset("task:a-hash", "id", "a-hash")
    answer = read_answer(r, "a-hash", workers)
    assert answer["status"] == "error" and answer["error_type"] == "ProblemFormatError"
    r.set("task:after-errors", json.dumps({"id": "after-errors", "prompt": ISSUE_PROMPT, "agents": 1}))
    assert read_answer(r, "after-errors", workers)["status"] == "done"
    assert all(p.proc.poll() is None for p in workers)
