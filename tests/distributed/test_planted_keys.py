"""Keys another Redis client planted, read by a real `memdoor worker` (scripted model, team key, a Redis
of the test's own): the worker logs what it cannot use, in one escaped line, and goes on answering."""

from __future__ import annotations

import json

import pytest
import redis
from dist_helpers import ISSUE_PROMPT, PALINDROME_ANSWER, WorkerProc, scripted_file, wait_for

from memdoor.distributed.remote import RemoteConfig, RemoteRun
from memdoor.distributed.signing import ANSWER, TeamKey

KEY_TEXT = "team-key-planted-keys-0c41d2e9"
KEY = TeamKey(KEY_TEXT.encode())
TESTS = [{"input": ["abba"], "output": True}, {"input": ["abc"], "output": False}]


@pytest.fixture
def start_worker(tmp_path, server, r):
    """Start one worker (role ``all``, the team key, scripted ``answers``) under ``name``; it must still be
    running at the end."""
    procs: list[WorkerProc] = []

    def start(name: str = "w1", answers: tuple[str, ...] = (PALINDROME_ANSWER,)) -> WorkerProc:
        spec = scripted_file(tmp_path / f"{name}.json", list(answers), delay=0.1)
        proc = WorkerProc(tmp_path, name, spec, server.url, env={"MEMDOOR_TEAM_KEY": KEY_TEXT})
        procs.append(proc)
        wait_for(lambda: "serving" in proc.log, 120, f"{name} serving", procs=procs)
        return proc

    yield start
    for p in procs:
        assert p.proc.poll() is None, f"the worker stopped:\n{p.log[-3000:]}"
        assert p.stop() == 0


def answer(r: redis.Redis, task_id: str, procs: list[WorkerProc], **task) -> dict:
    """Submit a task and wait for the team's signed answer."""
    r.set(f"task:{task_id}", json.dumps({"id": task_id, "prompt": ISSUE_PROMPT, **task}))
    key = f"memory:{task_id}"
    raw = wait_for(
        lambda: (got := r.get(key)) is not None and KEY.vouches(ANSWER, key, got) and got,
        120,
        f"a signed answer at {key}",
        procs=procs,
    )
    return KEY.open(ANSWER, key, raw)


def test_keys_of_the_wrong_name_type_or_shape_do_not_stop_the_worker(r, start_worker):
    r.set(b"task:bad\xff", "{}")  # a task key whose name is not UTF-8
    r.hset("memory:a-hash", "x", "y")  # an answer key holding a hash, next to its task
    r.set("task:a-hash", json.dumps({"id": "a-hash", "prompt": ISSUE_PROMPT, "tests": TESTS}))
    r.set("memdoor:agent:w1", "[1]")  # the worker's own heartbeat key, not a JSON object
    r.hset("memdoor:agents", b"\xfe", "{}")  # a registration whose name is not UTF-8
    r.hset("memdoor:agents", "w8", json.dumps({"role": "answer", "model": ["a", "list"]}))
    r.set("memdoor:agent:w8", "alive", ex=600)  # ... and "alive"
    worker = start_worker("w1")

    done = answer(r, "ok", [worker], tests=TESTS, agents=1)
    assert done["status"] == "done" and "s == s[::-1]" in done["code"], done
    assert done["agents"] == [f"agent0={worker_spec(worker)}"]  # the list-valued model is not on the team
    assert r.type("memory:a-hash") == b"hash"  # left alone: no answer can be written there
    log = worker.log
    assert "Traceback" not in log
    assert r"skipped the key task:bad\xff: its name is not UTF-8" in log
    assert log.count("seed task a-hash skipped: the answer key memory:a-hash is not a string") == 1


def worker_spec(worker: WorkerProc) -> str:
    return next(a for a in worker.proc.args if a.startswith("scripted:"))


def test_a_poisoned_work_log_does_not_cost_the_answer(r, start_worker):
    worker = start_worker("w1")
    plan = {"run": "evilrun", "models": [worker_spec(worker)], "agents": 1}
    r.set("memdoor:run:t3", json.dumps(plan))  # the run plan, fixed before the task: its work log is known
    r.rpush(
        "memdoor:work:evilrun",
        '{"agent": ["x"]}',
        '{"agent": 5}',
        "[1]",
        b"\xff",
        '{"agent": "w7", "ok": true}',
    )

    done = answer(r, "t3", [worker], tests=TESTS)
    assert done["status"] == "done" and "s == s[::-1]" in done["code"], done
    assert done["workers"] == {"w1": 1, "w7": 1}  # only entries naming an agent as text count
    assert "Traceback" not in worker.log


@pytest.mark.parametrize(
    ("task", "plan", "field", "says"),
    [
        ({"strategy": "parallel:65"}, None, None, "'parallel:65': a team has at most 64 agents"),
        ({"agents": 65}, None, "agents", "less than or equal to 64"),
        ({}, {"run": "r1", "models": ["m"], "agents": []}, "agents", "the run plan is unusable"),
        ({}, {"run": "r1", "models": ["m"], "agents": 65}, "agents", "the run plan is unusable"),
        ({}, {"run": "r1", "models": "m", "agents": 1}, "models", "the run plan is unusable"),
        ({}, ["not", "a", "plan"], None, "the run plan is unusable"),
    ],
)
def test_a_team_over_the_cap_or_an_unusable_plan_is_a_one_line_error(
    r, start_worker, task, plan, field, says
):
    worker = start_worker("w1")
    if plan is not None:
        r.set("memdoor:run:big", json.dumps(plan))
    done = answer(r, "big", [worker], tests=TESTS, **task)
    assert done["status"] == "error" and says in done["error"], done
    assert "\n" not in done["error"] and (field is None or repr(field) in done["error"])
    assert r.xlen(f"memdoor:jobs:{worker_spec(worker)}") == 0 and r.hget("memdoor:stats", "results") is None
    assert "Traceback" not in worker.log


def test_ids_a_peer_chose_reach_the_log_escaped(server, r, start_worker):
    worker = start_worker("w1")
    spec = worker_spec(worker)
    # a seed task whose id forges a log line and clears the screen
    task_id = "x\x1b[2J\x1b[31m\nFAKE 00:00:00 w1: job admin-approved answered"
    done = answer(r, task_id, [worker], tests=TESTS, agents=1)
    assert done["status"] == "done", done
    # a job under a run id of the peer's choosing (its id is its request's, so the worker answers it),
    # with a result planted at its key, so that the worker also logs the replacing
    evil = "r\x1b[31m\n23:59:59 w1: FORGED LINE"
    job = RemoteRun(RemoteConfig(url=server.url), run_id=evil).job(
        spec, [{"role": "user", "content": "write code"}], n=1, max_tokens=64
    )
    r.set(f"memdoor:result:{job.id}", json.dumps({"job": job.id, "ok": True}))
    r.xadd(f"memdoor:jobs:{spec}", {"job": job.model_dump_json()})
    wait_for(lambda: r.exists(f"memdoor:reply:{job.id}"), 120, "the job answered", procs=[worker])
    wait_for(lambda: "replacing a result" in worker.log, 60, "the log line", procs=[worker])

    log = worker.log_path.read_bytes()
    assert b"\x1b" not in log
    lines = log.decode().splitlines()
    assert not [line for line in lines if line.startswith(("FAKE", "23:59:59"))]
    assert r"seed task x\x1b[2J\x1b[31m\nFAKE 00:00:00 w1: job admin-approved answered: done" in log.decode()
    assert sum(r"r\x1b[31m\n23:59:59 w1: FORGED LINE:" in line for line in lines) == 2  # replacing, answered


def test_a_team_that_wrote_no_code_gets_an_error_answer(r, start_worker):
    worker = start_worker("w1")
    mute = start_worker("w2", answers=("I cannot help with that.",))
    done = answer(r, "mute", [worker, mute], tests=TESTS, agents=2, models=[worker_spec(mute)])
    assert done["status"] == "error" and done["answer"] == "" and done["code"] == "", done
    assert done["error"] == "the team produced no code: no candidate had a code block (stopped: done)"
    assert done["error_type"] == "NoSolution" and done["calls"] == done["jobs"] == 2


def test_a_job_for_another_model_is_logged_in_one_short_line(server, r, start_worker):
    worker = start_worker("w1")
    spec = worker_spec(worker)
    job = RemoteRun(RemoteConfig(url=server.url)).job(spec, [{"role": "user", "content": "hi"}], max_tokens=8)
    job.model = "m" * 100_000  # not the stream's model: dropped, and named in the log
    r.xadd(f"memdoor:jobs:{spec}", {"job": job.model_dump_json()})
    wait_for(lambda: "dropped job entry" in worker.log, 60, "the log line", procs=[worker])
    [line] = [line for line in worker.log.splitlines() if "dropped job entry" in line]
    assert "is not the stream" in line and len(line) < 1000
