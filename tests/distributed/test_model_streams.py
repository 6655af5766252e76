"""Each raw model spec has a job stream of its own, named without its secrets: two models whose names
hold ``://`` on one endpoint, and workers of one endpoint with other credentials, never answer each other's
jobs (real workers, a real Redis of the test's own, an OpenAI-compatible endpoint on loopback)."""

from __future__ import annotations

import json
import re

import pytest
from dist_helpers import ISSUE_PROMPT, ChatEndpoint, WorkerProc, one_call, wait_for, work_tally

from memdoor.core.errors import ModelUnavailable
from memdoor.core.net import redact_spec
from memdoor.distributed.jobs import Keys
from memdoor.distributed.remote import RemoteConfig, RemoteRun
from memdoor.distributed.signing import TeamKey, served_name

GOOD, WRONG = "Good-5e02c7-pw", "Wrong-91ab3d-pw"
KEY = TeamKey(b"team-key-model-streams-77d0a1c4")
TESTS = [{"input": ["abba"], "output": True}, {"input": ["abc"], "output": False}]


def test_a_spec_is_served_under_its_shown_spec_and_a_digest_of_it_when_it_holds_a_secret():
    plain = "openai:s3://bucket/llama-8b@http://127.0.0.1:8000/v1"
    assert served_name(plain, None) == plain == served_name(plain, KEY)  # nothing hidden: the name unchanged
    path = "scripted:/tmp/runs/x@y/answers.json"  # a path holding "@": no user info, the name unchanged
    assert (
        served_name(path, None) == path == served_name(path, KEY) == served_name(served_name(path, KEY), KEY)
    )
    names = {
        served_name(f"openai:m@http://{user}@h:8000/v1", key)
        for user in (f"alice:{GOOD}", f"alice:{WRONG}", "alice", "bob")
        for key in (None, KEY)
    }
    assert len(names) == 8  # other credentials, or another team key: another stream
    for name in names:
        assert GOOD not in name and WRONG not in name
        assert name.startswith("openai:m@http://") and "***@h:8000/v1#" in name
        assert served_name(name, KEY) == name == redact_spec(name)  # a served name is its own


def test_failed_calls_are_not_counted_as_answered(server, r):
    keys = Keys()
    entries = [{"agent": "wgood", "ok": True}, {"agent": "wbad", "ok": False}, {"agent": "wbad", "ok": False}]
    r.rpush(keys.work("run1"), *(json.dumps(e) for e in entries))
    assert work_tally(server.port, "run1") == {"wgood": 1}


def test_two_models_named_with_a_scheme_on_one_endpoint_have_a_stream_each(tmp_path, server, r):
    endpoint = ChatEndpoint(say_model=True)
    specs = [f"openai:s3://bucket/{m}@http://127.0.0.1:{endpoint.port}/v1" for m in ("llama-8b", "qwen-7b")]
    workers = [WorkerProc(tmp_path, f"w{i}", spec, server.url, role="answer") for i, spec in enumerate(specs)]
    try:
        for w in workers:
            wait_for(lambda w=w: "serving" in w.log, 120, f"{w.agent_id} serving", procs=workers)
        assert {k.decode() for k in r.scan_iter("memdoor:jobs:*")} == {f"memdoor:jobs:{s}" for s in specs}
        for spec in specs:
            model = spec.removeprefix("openai:").partition("@http")[0]
            text = one_call(RemoteRun(RemoteConfig(url=server.url, poll=0.2)), spec)
            assert text.startswith(f"I am {model}\n"), text
    finally:
        for w in workers:
            w.stop()
        endpoint.close()


def test_workers_with_other_credentials_for_one_endpoint_answer_none_of_each_others_jobs(tmp_path, server, r):
    endpoint = ChatEndpoint(user="alice", password=GOOD)
    good, bad = (f"openai:m@http://alice:{pw}@127.0.0.1:{endpoint.port}/v1" for pw in (GOOD, WRONG))
    env = {"MEMDOOR_TEAM_KEY": "team-key-model-streams-77d0a1c4"}
    workers = [
        WorkerProc(tmp_path, "wbad", bad, server.url, role="answer", env=env),
        WorkerProc(tmp_path, "wgood", good, server.url, env=env),  # answers and leads
    ]
    try:
        for w in workers:
            wait_for(lambda w=w: "serving" in w.log, 120, f"{w.agent_id} serving", procs=workers)
        registered = {k.decode(): json.loads(v)["model"] for k, v in r.hgetall("memdoor:agents").items()}
        assert registered == {"wgood": served_name(good, KEY), "wbad": served_name(bad, KEY)}
        assert registered["wgood"] != registered["wbad"]
        task = {"id": "t1", "prompt": ISSUE_PROMPT, "tests": TESTS, "agents": 4, "models": [good]}
        r.set("task:t1", json.dumps(task))
        raw = wait_for(lambda: r.get("memory:t1"), 180, "the answer at memory:t1", procs=workers)
    finally:
        for w in workers:
            w.stop()
        endpoint.close()
    answer = json.loads(raw)
    assert answer["status"] == "done" and list(answer["workers"]) == ["wgood"], answer
    # a status 401, not the digits inside a port such as 127.0.0.1:59401
    assert not re.search(r"(?<![\w.:])401\b", workers[0].log), workers[0].log
    assert GOOD not in raw.decode() and WRONG not in workers[0].log


def test_a_caller_without_the_workers_team_key_is_told_so(tmp_path, server, r):
    endpoint = ChatEndpoint(user="alice", password=GOOD)
    spec = f"openai:m@http://alice:{GOOD}@127.0.0.1:{endpoint.port}/v1"
    env = {"MEMDOOR_TEAM_KEY": "team-key-model-streams-77d0a1c4"}
    worker = WorkerProc(tmp_path, "wkeyed", spec, server.url, role="answer", env=env)
    try:
        wait_for(lambda: "serving" in worker.log, 120, "wkeyed serving", procs=[worker])
        with pytest.raises(ModelUnavailable) as e:  # this process has no team key: another digest
            one_call(RemoteRun(RemoteConfig(url=server.url, poll=0.2, wait_for_worker=1)), spec)
    finally:
        worker.stop()
        endpoint.close()
    assert "MEMDOOR_TEAM_KEY" in str(e.value) and GOOD not in str(e.value)
