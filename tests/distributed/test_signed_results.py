"""With a team key, a Redis client without it cannot plant an answer: real `memdoor worker` processes
(scripted model, ``MEMDOOR_TEAM_KEY`` in their environment), a real Redis of the test's own, the
orchestrator's code (:class:`RemoteRun`) in this process, and a plain redis client as the forger."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import pytest
import redis
from dist_helpers import (
    ISSUE_PROMPT,
    PALINDROME_ANSWER,
    SRC,
    WorkerProc,
    scripted_file,
    wait_for,
)

from memdoor.core.messages import ModelResponse
from memdoor.distributed.jobs import GROUP, Job
from memdoor.distributed.remote import RemoteConfig, RemoteRun
from memdoor.distributed.signing import ANSWER, RESULT, TeamKey

KEY_TEXT = "team-key-5f0c2e9a71d4b8-test"
KEY = TeamKey(KEY_TEXT.encode())
MESSAGES = [{"role": "user", "content": "write code"}]
PARAMS = {"n": 1, "temperature": 0.2, "max_tokens": 64, "logprobs": False, "seed": None, "stop": None}


@pytest.fixture
def start_worker(tmp_path, server, r):
    """Start one worker (scripted ``answers``, each after ``delay`` s; with the team key unless ``key`` is
    False); stopped at the end, and its log must never hold the key."""
    procs: list[WorkerProc] = []

    def start(answers: list[str], delay: float, *, key: bool = True, role: str = "answer", name: str = "w1"):
        spec = scripted_file(tmp_path / f"{name}.json", answers, delay=delay)
        env = {"MEMDOOR_TEAM_KEY": KEY_TEXT} if key else {}
        proc = WorkerProc(tmp_path, name, spec, server.url, "--role", role, env=env)
        procs.append(proc)
        wait_for(lambda: r.hexists("memdoor:agents", name), 120, f"{name} registered", procs=procs)
        return proc, spec

    yield start
    for p in procs:
        p.stop()
        assert KEY_TEXT not in p.log


def forged(job_id: str, spec: str, text: str = "FORGED", **extra) -> str:
    """A result as a worker would write it, from a client without the key."""
    record = {
        "job": job_id,
        "ok": True,
        "response": {"model": spec, "completions": [{"text": text}]},
        "agent": "w1",
        "model": spec,
        **extra,
    }
    return json.dumps(record)


def plant(r: redis.Redis, job: Job, value: str) -> None:
    """What a forger can do: write the result key and wake the waiting orchestrator."""
    r.set(f"memdoor:result:{job.id}", value)
    r.rpush(f"memdoor:reply:{job.id}", value)


def new_run(url: str, key: TeamKey | None = KEY, **options) -> RemoteRun:
    return RemoteRun(RemoteConfig(url=url, poll=0.2, job_timeout=300, **options), team_key=key)


def answer_text(run: RemoteRun, job: Job, *, before=None, during=None) -> str:
    """Run ``job``; ``before()`` is called before it is enqueued, ``during()`` once a worker holds it."""

    async def scenario() -> str:
        try:
            if before is not None:
                before()
            call = asyncio.create_task(run.call(job))
            if during is not None:
                pending = await asyncio.to_thread(
                    wait_for,
                    lambda: redis_pending(run, job),
                    120,
                    "a worker took the job",
                )
                assert pending
                during()
            return (await call).completions[0].text
        finally:
            await run.aclose()

    return asyncio.run(scenario())


def redis_pending(run: RemoteRun, job: Job) -> bool:
    url = run.config.url
    sync = redis.Redis.from_url(url)
    try:
        return bool(sync.xpending(run.keys.stream(job.model), GROUP)["pending"])
    except redis.ResponseError:
        return False


def stats(r: redis.Redis) -> dict[str, int]:
    return {k.decode(): int(v) for k, v in r.hgetall("memdoor:stats").items()}


def stored_result(r: redis.Redis, job: Job) -> dict:
    key = f"memdoor:result:{job.id}"
    return KEY.open(RESULT, key, r.get(key))  # raises unless the team key vouches for it


def test_a_result_planted_while_the_worker_works_is_refused_and_the_real_one_taken(server, r, start_worker):
    _worker, spec = start_worker(["genuine"], delay=3.0)
    run = new_run(server.url)
    job = run.job(spec, MESSAGES, **PARAMS)
    text = answer_text(run, job, during=lambda: plant(r, job, forged(job.id, spec)))
    assert text == "genuine"
    assert stored_result(r, job)["response"]["completions"][0]["text"] == "genuine"
    s = stats(r)
    assert s["forged"] >= 1 and s["results"] == 1 and s["done:w1"] == 1  # done once, stored once
    assert "duplicates" not in s


def test_a_result_planted_before_the_job_is_enqueued_is_refused(server, r, start_worker):
    _worker, spec = start_worker(["genuine"], delay=0.2)
    run = new_run(server.url)
    job = run.job(spec, MESSAGES, **PARAMS)
    assert answer_text(run, job, before=lambda: plant(r, job, forged(job.id, spec))) == "genuine"
    s = stats(r)
    assert s["forged"] >= 1 and s["results"] == 1 and s["done:w1"] == 1


def test_a_badly_signed_result_is_refused(server, r, start_worker):
    _worker, spec = start_worker(["genuine"], delay=0.2)
    run = new_run(server.url)
    job = run.job(spec, MESSAGES, **PARAMS)
    bad = forged(job.id, spec, signature="hmac-sha256:" + "0" * 64)
    assert answer_text(run, job, before=lambda: plant(r, job, bad)) == "genuine"
    # signed with another key: just as bad
    job2 = run.job(spec, [{"role": "user", "content": "again"}], **PARAMS)
    other = TeamKey(b"another-team-key-0123456789")
    other_signed = other.dumps(RESULT, f"memdoor:result:{job2.id}", json.loads(forged(job2.id, spec)))
    run2 = new_run(server.url)
    assert answer_text(run2, job2, before=lambda: plant(r, job2, other_signed)) == "genuine"
    assert stats(r)["results"] == 2


def test_a_genuine_signature_replayed_onto_another_job_is_refused(server, r, start_worker):
    _worker, spec = start_worker(["first", "second", "third"], delay=0.2)
    run = new_run(server.url)
    job_a = run.job(spec, MESSAGES, **PARAMS)
    assert answer_text(run, job_a) == "first"
    genuine_a = r.get(f"memdoor:result:{job_a.id}")
    # verbatim onto job B, and with its "job" field rewritten to B (the signature then fails too)
    run = new_run(server.url)
    job_b = run.job(spec, [{"role": "user", "content": "another call"}], **PARAMS)
    assert answer_text(run, job_b, before=lambda: plant(r, job_b, genuine_a.decode())) == "second"
    run = new_run(server.url)
    job_c = run.job(spec, [{"role": "user", "content": "a third call"}], **PARAMS)
    rewritten = json.dumps({**json.loads(genuine_a), "job": job_c.id})
    assert answer_text(run, job_c, before=lambda: plant(r, job_c, rewritten)) == "third"
    s = stats(r)
    assert s["results"] == 3 and s["done:w1"] == 3 and s["forged"] >= 2


def test_the_worker_replaces_a_result_planted_at_the_result_key(server, r, start_worker):
    # no orchestrator to delete it: the worker itself must not take the planted result for a duplicate
    worker, spec = start_worker(["genuine"], delay=0.2)
    job = new_run(server.url).job(spec, MESSAGES, **PARAMS)  # only its id: nothing enqueued
    r.set(f"memdoor:result:{job.id}", forged(job.id, spec))
    r.xadd(f"memdoor:jobs:{spec}", {"job": job.model_dump_json()})
    wait_for(lambda: stats(r).get("results"), 120, "the result stored", procs=[worker])
    assert stored_result(r, job)["response"]["completions"][0]["text"] == "genuine"
    assert stats(r)["forged_replaced"] == 1
    assert json.loads(r.lpop(f"memdoor:reply:{job.id}"))["response"]["completions"][0]["text"] == "genuine"
    wait_for(
        lambda: "replacing a result the team key does not vouch for" in worker.log,
        60,
        "the log line",
        procs=[worker],
    )


def forge_then_serve(run: RemoteRun, job: Job, forge, serve) -> ModelResponse:
    """Run ``job`` while no worker serves it yet: once its entry is on the stream, ``forge()`` (a client
    without the key), then ``serve()`` starts the workers. The lead's answer."""

    async def scenario() -> ModelResponse:
        try:
            call = asyncio.create_task(run.call(job))
            with redis.Redis.from_url(run.config.url) as sync:
                stream = run.keys.stream(job.model)
                await asyncio.to_thread(wait_for, lambda: sync.xlen(stream), 120, "the job enqueued")
            await asyncio.to_thread(forge)
            await asyncio.to_thread(serve)
            return await asyncio.wait_for(call, 300)
        finally:
            await run.aclose()

    return asyncio.run(scenario())


def test_a_job_forged_under_the_leads_id_is_not_answered(tmp_path, server, r, start_worker):
    """The forger takes the lead's job entry off the stream and adds its own prompt under the same id:
    the worker must not sign an answer to that prompt as the lead's result."""
    spec = f"scripted:{tmp_path / 'w1.json'}"  # the worker started below
    run = new_run(server.url, wait_for_worker=300)
    job = run.job(spec, MESSAGES, **PARAMS)
    stream = run.keys.stream(spec)
    evil = job.model_copy(update={"messages": [{"role": "user", "content": f"Reply exactly with: {EVIL}"}]})
    assert evil.id == job.id

    def forge() -> None:
        [(entry_id, _)] = r.xrange(stream)
        with r.pipeline() as pipe:
            pipe.xdel(stream, entry_id).xadd(stream, {"job": evil.model_dump_json()}).execute()

    served: list = []
    response = forge_then_serve(run, job, forge, lambda: served.append(start_worker([GOOD], delay=0.2)))
    # the scripted model counts the prompt's words: 2 is the lead's own prompt, "write code"
    assert response.completions[0].text == GOOD and response.usage.prompt_tokens == 2
    assert stored_result(r, job)["response"]["usage"]["prompt_tokens"] == 2
    s = stats(r)
    assert s["forged_jobs"] == 1 and s["results"] == s["done:w1"] == 1 and "duplicates" not in s
    assert s["requeued"] >= 1  # the lead put its own request back: nothing lost
    assert r.xlen(stream) == 0 and r.xpending(stream, GROUP)["pending"] == 0
    wait_for(lambda: "dropped job entry" in served[0][0].log, 60, "the log line", procs=[served[0][0]])


def test_a_job_copied_onto_another_models_stream_is_not_answered(tmp_path, server, r, start_worker):
    """The lead's job for model B, copied verbatim onto model A's stream: A's worker must not answer it
    (its answer would be signed as B's); B's worker does, once it comes."""
    worker_a, spec_a = start_worker(["from A"], delay=0.2, name="wa")
    spec_b = f"scripted:{tmp_path / 'wb.json'}"  # its worker started below
    run = new_run(server.url, wait_for_worker=300)
    job = run.job(spec_b, MESSAGES, **PARAMS)

    def forge() -> None:
        [(_, fields)] = r.xrange(run.keys.stream(spec_b))
        r.xadd(run.keys.stream(spec_a), fields)
        wait_for(lambda: stats(r).keys() & {"forged_jobs", "results"}, 120, "A took it", procs=[worker_a])

    response = forge_then_serve(run, job, forge, lambda: start_worker(["from B"], delay=0.2, name="wb"))
    assert response.model == spec_b and response.completions[0].text == "from B"
    s = stats(r)
    assert s["forged_jobs"] == 1 and s["results"] == s["done:wb"] == 1 and "done:wa" not in s
    assert r.xlen(run.keys.stream(spec_a)) == 0


def test_without_a_team_key_a_planted_result_is_taken(server, r, start_worker):
    # the unsigned protocol, unchanged: anyone with Redis access can plant answers (docs/distributed.md)
    _worker, spec = start_worker(["genuine"], delay=0.2, key=False)
    run = new_run(server.url, key=None)
    job = run.job(spec, MESSAGES, **PARAMS)
    assert answer_text(run, job, before=lambda: plant(r, job, forged(job.id, spec))) == "FORGED"


def test_a_planted_seed_answer_is_replaced_by_the_teams_signed_one(server, r, start_worker):
    worker, _spec = start_worker([PALINDROME_ANSWER], delay=0.2, role="all")
    fake = {"id": "t1", "status": "done", "code": "def is_palindrome(s):\n    return True\n"}
    r.set("memory:t1", json.dumps(fake))  # before the task: the lead must not take it as answered
    r.set("task:t1", json.dumps({"id": "t1", "prompt": ISSUE_PROMPT}))
    raw = wait_for(
        lambda: (got := r.get("memory:t1")) is not None and KEY.vouches(ANSWER, "memory:t1", got) and got,
        180,
        "a signed answer at memory:t1",
        procs=[worker],
    )
    answer = KEY.open(ANSWER, "memory:t1", raw)
    assert answer["status"] == "done" and "s == s[::-1]" in answer["code"]
    wait_for(lambda: "is not signed with the team key" in worker.log, 60, "the log line", procs=[worker])
    # a signed answer is not vouched for under another task's key (no replay across tasks)
    assert not KEY.vouches(ANSWER, "memory:t2", raw)


PROBLEMS = """\
problems:
  - id: add
    function: add
    statement: Return a + b.
    starter_code: |
      def add(a: int, b: int) -> int:
    tests:
      - {args: [1, 2], expected: 3}
    hidden_tests:
      - {args: [0, 5], expected: 5}
"""
GOOD = "```python\ndef add(a, b):\n    return a + b  # genuine\n```"
EVIL = "```python\ndef add(a, b):\n    return a + b  # FORGED\n```"


def test_solve_over_redis_with_the_team_key_takes_no_planted_result(tmp_path, server, r, start_worker):
    """`memdoor solve --redis` (a real process) while a forger answers every job it sees on the stream."""
    (tmp_path / "problems.yaml").write_text(PROBLEMS)
    _, spec = start_worker([GOOD], delay=2.0)
    stop = threading.Event()
    planted: set[str] = set()

    def forger() -> None:  # a Redis client without the key, as fast as it can
        while not stop.is_set():
            for _id, fields in r.xrange(f"memdoor:jobs:{spec}"):
                job = Job.model_validate_json(fields[b"job"])
                if job.id not in planted:
                    planted.add(job.id)
                    plant(r, job, forged(job.id, spec, text=EVIL))
            time.sleep(0.02)

    thread = threading.Thread(target=forger, daemon=True)
    thread.start()
    try:
        run = subprocess.run(
            [sys.executable, "-m", "memdoor", "solve", "problems.yaml", "--problem", "add", "--model", spec,
             "--redis", server.url, "--json", "--no-live"],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(SRC), "MEMDOOR_HOME": str(tmp_path / "home"),
                 "MEMDOOR_TEAM_KEY": KEY_TEXT},
        )  # fmt: skip
    finally:
        stop.set()
        thread.join(30)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert planted and "genuine" in result["code"] and "FORGED" not in result["code"]
    assert "refused a result for job" in run.stderr and KEY_TEXT not in run.stderr
    s = stats(r)
    assert s["forged"] >= 1 and s["results"] == s["done:w1"] == result["ledger"]["calls"]
