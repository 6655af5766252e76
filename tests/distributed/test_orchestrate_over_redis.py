"""`memdoor solve --redis` and `memdoor bench --redis`: the same strategies, with every agent step a job
answered by `memdoor worker` processes (scripted model: control flow only)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from dist_helpers import SRC, RedisServer, WorkerProc, scripted_file, wait_for

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "problems.yaml"
SUM_DIGITS = (
    "```python\ndef sum_digits(n: int) -> int:\n    return sum(int(d) for d in str(n))\n```\nVERDICT: OK"
)
WRONG = "```python\ndef sum_digits(n: int) -> int:\n    return 0\n```"


@pytest.fixture
def team(tmp_path):
    server = RedisServer(tmp_path).start()
    right = scripted_file(tmp_path / "right.json", [SUM_DIGITS])
    wrong = scripted_file(tmp_path / "wrong.json", [WRONG])
    procs = [
        WorkerProc(tmp_path, "r1", right, server.url, role="answer"),
        WorkerProc(tmp_path, "r2", right, server.url, role="answer"),
        WorkerProc(tmp_path, "x1", wrong, server.url, role="answer"),
    ]
    r = redis.Redis(host="127.0.0.1", port=server.port)
    wait_for(lambda: r.hlen("memdoor:agents") == 3, 120, "workers", procs=procs)
    yield server, right, wrong, procs, r
    for p in procs:
        p.stop()
    server.stop()


def memdoor(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "memdoor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


def test_solve_with_a_mixed_team_routes_calls_by_model(tmp_path, team):
    server, right, wrong, _procs, r = team
    done = memdoor(
        "solve",
        str(EXAMPLES),
        "--problem",
        "sum-of-digits",
        "--strategy",
        "parallel:3",
        "--model",
        right,
        "--model",
        wrong,
        "--redis",
        server.url,
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] is True
    stats = {k.decode(): int(v) for k, v in r.hgetall("memdoor:stats").items()}
    # agents 0 and 2 use the right model, agent 1 the wrong one: each call went to its model's workers
    assert stats.get("done:r1", 0) + stats.get("done:r2", 0) == 2 and stats["done:x1"] == 1
    assert stats["results"] == 3


def test_bench_over_redis(tmp_path, team):
    server, right, _wrong, _procs, r = team
    out = tmp_path / "bench"
    done = memdoor(
        "bench",
        str(EXAMPLES),
        "--limit",
        "2",
        "--strategies",
        "single,parallel:2",
        "--model",
        right,
        "--out",
        str(out),
        "--redis",
        server.url,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    stats = {k.decode(): int(v) for k, v in r.hgetall("memdoor:stats").items()}
    # two problems × two distinct agents: single's call is parallel:2's agent-0 draft, computed once
    # and replayed to the other row (paired draws)
    assert stats["results"] >= 2 * 2
    assert stats.get("done:x1", 0) == 0  # nothing routed to the other model's worker


def test_a_lead_without_a_model_orchestrates_while_answer_workers_answer(tmp_path):
    from dist_helpers import ISSUE_PROMPT, PALINDROME_ANSWER

    server = RedisServer(tmp_path).start()
    spec = scripted_file(tmp_path / "answers.json", [PALINDROME_ANSWER])
    procs = [
        WorkerProc(tmp_path, "lead", None, server.url, role="lead"),
        WorkerProc(tmp_path, "a1", spec, server.url, role="answer"),
    ]
    try:
        r = redis.Redis(host="127.0.0.1", port=server.port)
        wait_for(lambda: r.hlen("memdoor:agents") == 2, 120, "workers", procs=procs)
        r.set("task:t", json.dumps({"id": "t", "prompt": ISSUE_PROMPT}))
        answer = json.loads(wait_for(lambda: r.get("memory:t"), 120, "memory:t", procs=procs))
        assert answer["status"] == "done", answer
        assert len(answer["agents"]) == 1  # one answering worker → a team of one by default
        assert answer["workers"] == {"a1": 2}  # the tests call and the draft; the lead answered nothing
        # the lead logs after it writes memory:t: wait for the line rather than race it
        wait_for(lambda: "seed task t: done" in procs[0].log, 60, "the lead's log line", procs=procs)
    finally:
        for p in procs:
            p.stop()
        server.stop()
