"""Faults with real `memdoor worker` processes and a Redis server of the test's own: a worker killed
mid-job, the orchestrating worker killed, SIGTERM, Redis restarted, bad start-up options."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
import redis
from dist_helpers import (
    ISSUE_PROMPT,
    PALINDROME_ANSWER,
    SRC,
    WorkerProc,
    free_port,
    scripted_file,
    wait_for,
)


@pytest.fixture
def cluster(tmp_path, server):
    """Start workers on demand; every one is stopped at the end."""
    procs: list[WorkerProc] = []

    def start(n: int, delay: float, extra: tuple[str, ...] = ()) -> list[WorkerProc]:
        spec = scripted_file(tmp_path / "answers.json", [PALINDROME_ANSWER], delay=delay)
        new = [
            WorkerProc(
                tmp_path,
                f"w{len(procs) + i}",
                spec,
                server.url,
                "--visibility-timeout",
                "2",
                "--heartbeat-ttl",
                "3",
                *extra,
            )
            for i in range(1, n + 1)
        ]
        procs.extend(new)
        r = redis.Redis(host="127.0.0.1", port=server.port)
        wait_for(lambda: r.hlen("memdoor:agents") >= len(procs), 120, "workers registered", procs=procs)
        return new

    start.procs = procs
    yield start
    for p in procs:
        p.stop()


def stream_key(tmp_path) -> str:
    return f"memdoor:jobs:scripted:{tmp_path / 'answers.json'}"


def lead_of(r: redis.Redis, task_id: str) -> str | None:
    raw = r.get(f"memdoor:claim:{task_id}")
    return raw.decode().split(":")[0] if raw else None


def busy_workers(r: redis.Redis, stream: str) -> dict[str, int]:
    """Consumers holding unacknowledged jobs → how many."""
    try:
        info = r.xpending(stream, "workers")
    except redis.ResponseError:
        return {}
    return {c["name"].decode(): int(c["pending"]) for c in info.get("consumers", []) if int(c["pending"])}


def result_keys(r: redis.Redis) -> list[bytes]:
    return list(r.scan_iter(match="memdoor:result:*", count=1000))


def answer_of(r: redis.Redis, task_id: str, procs, timeout: float = 120) -> dict:
    return json.loads(wait_for(lambda: r.get(f"memory:{task_id}"), timeout, f"memory:{task_id}", procs=procs))


def test_kill_9_mid_job_loses_nothing_and_counts_nothing_twice(tmp_path, server, cluster):
    workers = cluster(3, delay=3.0)
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.set("task:k9", json.dumps({"id": "k9", "prompt": ISSUE_PROMPT}))
    stream = stream_key(tmp_path)

    def victim():
        lead = lead_of(r, "k9")
        busy = busy_workers(r, stream)
        # the draft round: several jobs out at once; kill a worker that is not orchestrating
        if lead and sum(busy.values()) >= 2:
            return next((w for w in busy if w != lead), None)
        return None

    name = wait_for(victim, 120, "a worker busy with a draft", procs=workers)
    proc = next(p for p in workers if p.agent_id == name)
    proc.signal(signal.SIGKILL)
    proc.wait(30)

    answer = answer_of(r, "k9", workers)
    assert answer["status"] == "done", answer
    assert answer["jobs"] == answer["calls"] == 4  # the ledger has each call once (test writing too)
    stats = {k.decode(): int(v) for k, v in r.hgetall("memdoor:stats").items()}
    assert stats["reclaimed"] >= 1  # the dead worker's job was taken over...
    assert stats["results"] == 4  # ...and every job's result was stored exactly once
    assert len(result_keys(r)) == 4


def test_the_orchestrating_worker_dies_and_another_takes_the_task_over(tmp_path, server, cluster):
    workers = cluster(3, delay=2.0, extra=("--lease", "3"))
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.set("task:lead", json.dumps({"id": "lead", "prompt": ISSUE_PROMPT}))
    stream = stream_key(tmp_path)
    lead = wait_for(
        lambda: lead_of(r, "lead") if sum(busy_workers(r, stream).values()) >= 2 else None,
        120,
        "drafts under way",
        procs=workers,
    )
    proc = next(p for p in workers if p.agent_id == lead)
    proc.signal(signal.SIGKILL)
    proc.wait(30)

    answer = answer_of(r, "lead", workers)
    assert answer["status"] == "done", answer
    new_lead = wait_for(  # logged just after the answer is written: wait for it rather than race it
        lambda: next((p for p in workers if p is not proc and "seed task lead: done" in p.log), None),
        60,
        "the new lead's log line",
        procs=workers,
    )
    assert new_lead.agent_id != lead
    stats = {k.decode(): int(v) for k, v in r.hgetall("memdoor:stats").items()}
    assert stats["results"] == len(result_keys(r)) == 4  # the takeover reused the stored results


def test_sigterm_hands_back_the_current_job_and_exits_0(tmp_path, server, cluster):
    workers = cluster(2, delay=4.0, extra=("--grace", "0"))
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.set("task:term", json.dumps({"id": "term", "prompt": ISSUE_PROMPT, "agents": 2}))
    stream = stream_key(tmp_path)

    def victim():
        lead = lead_of(r, "term")
        return next((w for w in busy_workers(r, stream) if lead and w != lead), None)

    name = wait_for(victim, 120, "a busy worker that does not lead", procs=workers)
    proc = next(p for p in workers if p.agent_id == name)
    proc.signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    assert "handed back" in proc.log
    assert not r.hexists("memdoor:agents", name) and not r.exists(f"memdoor:agent:{name}")

    answer = answer_of(r, "term", workers)
    assert answer["status"] == "done", answer
    stats = {k.decode(): int(v) for k, v in r.hgetall("memdoor:stats").items()}
    assert stats["handed_back"] >= 1 and stats["results"] == len(result_keys(r))


def test_sigterm_with_grace_finishes_the_current_job(tmp_path, server, cluster):
    workers = cluster(2, delay=2.0)
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.set("task:grace", json.dumps({"id": "grace", "prompt": ISSUE_PROMPT, "agents": 2}))
    stream = stream_key(tmp_path)
    name = wait_for(lambda: next(iter(busy_workers(r, stream)), None), 120, "a busy worker", procs=workers)
    proc = next(p for p in workers if p.agent_id == name)
    proc.signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    assert "answered" in proc.log and "handed back" not in proc.log
    answer = answer_of(r, "grace", workers)
    assert answer["status"] == "done", answer


@pytest.mark.parametrize("persist", [False, True], ids=["empty-restart", "persistent-restart"])
def test_redis_restart_mid_run(tmp_path, cluster, server, persist):
    if persist:  # the same server, now with its data on disk across the restart
        server.stop()
        server.persist = True
        server.start()
    workers = cluster(2, delay=2.0)
    r = redis.Redis(host="127.0.0.1", port=server.port)
    r.set("task:restart", json.dumps({"id": "restart", "prompt": ISSUE_PROMPT, "agents": 2}))
    stream = stream_key(tmp_path)
    wait_for(
        lambda: sum(busy_workers(r, stream).values()) >= 1 and lead_of(r, "restart"),
        120,
        "jobs under way",
        procs=workers,
    )
    server.stop()
    server.start()

    answer = answer_of(r, "restart", workers, timeout=180)
    # completes, or fails with a clear error object: never silence
    assert answer["status"] in ("done", "error") and answer["id"] == "restart"
    if answer["status"] == "error":
        assert answer["error"]
    else:
        assert "def is_palindrome" in answer["code"]
    wait_for(
        lambda: any("Redis unreachable" in p.log for p in workers), 60, "the outage logged", procs=workers
    )
    # the workers are still serving: a new task is solved after the restart
    wait_for(lambda: r.hlen("memdoor:agents") == 2, 60, "workers registered again", procs=workers)
    r.set("task:after", json.dumps({"id": "after", "prompt": ISSUE_PROMPT, "agents": 1}))
    assert answer_of(r, "after", workers)["status"] == "done"


def run_worker(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "memdoor", "worker", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "nosuch:thing"], "bad model spec 'nosuch:thing'"),
        (["--model", "scripted:/nonexistent/answers.json"], "cannot read answers"),
        ([], "worker needs a model"),
        (["--model", "scripted:x", "--redis", "nosuch://host"], "bad Redis URL"),
    ],
)
def test_bad_start_up_options_fail_fast_with_one_line(args, expected, tmp_path):
    if args[:2] == ["--model", "scripted:x"]:
        args = ["--model", scripted_file(tmp_path / "a.json", ["x"]), *args[2:]]
    done = run_worker("--redis", f"redis://127.0.0.1:{free_port()}/0", *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdoor: ") and expected in lines[0], done.stderr


def test_unreachable_redis_at_start_is_a_clear_error(tmp_path):
    spec = scripted_file(tmp_path / "a.json", ["x"])
    done = run_worker(
        "--model", spec, "--redis", f"redis://127.0.0.1:{free_port()}/0", "--startup-timeout", "1", "-q"
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("memdoor: Redis at redis://127.0.0.1:")
