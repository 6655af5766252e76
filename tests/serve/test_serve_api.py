"""The team endpoint through the official ``openai`` client: models, answers, usage, streaming, traces."""

from __future__ import annotations

import json

import httpx
from serve_helpers import ADD_PROMPT, BAD, GOOD, client, fenced, running, scripted, user

from memdoor.run.tracestore import load_trace


def test_models_are_listed_and_retrieved(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single", "parallel:3", "memdoor/hybrid-5"]) as srv:
        c = client(srv)
        listed = c.models.list()
        assert [m.id for m in listed] == ["memdoor/single", "memdoor/parallel-3", "memdoor/hybrid-5"]
        assert all(m.owned_by == "memdoor" and m.object == "model" for m in listed)
        assert c.models.retrieve("memdoor/parallel-3").id == "memdoor/parallel-3"


def test_answer_is_the_code_that_passes_the_prompt_examples(sandbox, tmp_path):
    # agent0 and agent2 write a wrong add, agent1 the right one: only the examples can tell them apart
    models = {
        "scripted:bad": scripted("scripted:bad", fenced(BAD)),
        "scripted:good": scripted("scripted:good", fenced(GOOD)),
    }
    settings = {"models": ["scripted:bad", "scripted:good", "scripted:bad"], "teams": ["memdoor/parallel-3"]}
    with running(models, sandbox, trace_dir=tmp_path, **settings) as srv:
        raw = client(srv).chat.completions.with_raw_response.create(
            model="memdoor/parallel-3", messages=user(ADD_PROMPT)
        )
    answer = raw.parse()
    trace_id = raw.headers["x-memdoor-trace-id"]
    assert answer.id == f"chatcmpl-{trace_id}"
    assert answer.model == "memdoor/parallel-3"
    choice = answer.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert choice.message.content == f"```python\n{GOOD}\n```"
    meta = answer.model_extra["memdoor"]
    assert meta["agent"] == "agent1"
    assert meta["tests"] == {
        "source": "prompt",
        "count": 2,
        "expected_outputs": True,
        "status": "passed",
        "passed": 2,
        "total": 2,
    }
    # usage is the whole team's: every call recorded in the run's trace
    record = load_trace(tmp_path, trace_id)
    ledger = record.final["ledger"]
    assert ledger["calls"] == 3
    assert answer.usage.prompt_tokens == ledger["prompt_tokens"] > 0
    assert answer.usage.completion_tokens == ledger["completion_tokens"] > 0
    assert answer.usage.total_tokens == ledger["prompt_tokens"] + ledger["completion_tokens"]


def test_without_examples_the_team_writes_test_inputs(sandbox):
    def respond(messages):
        if "write only calls of" in messages[-1]["content"]:
            return "```input\n[1, 2]\n```\n```input\n[5, 5]\n```\n"
        return fenced("def total(xs):\n    return sum(xs)")

    models = {"scripted:s": scripted("scripted:s", respond=respond)}
    with running(models, sandbox, teams=["memdoor/parallel-2"]) as srv:
        answer = client(srv).chat.completions.create(
            model="memdoor/parallel-2",
            messages=[
                {"role": "system", "content": "You are a helpful assistant."},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "Write a function `total(xs)` summing a list."}],
                },
            ],
        )
    meta = answer.model_extra["memdoor"]
    assert meta["tests"]["source"] == "team"
    assert meta["tests"]["count"] == 2 and meta["tests"]["expected_outputs"] is False
    assert "return sum(xs)" in answer.choices[0].message.content
    assert meta["calls"] == 3  # two drafts and the test-writing call, all in the usage
    assert answer.usage.total_tokens > 0


def test_a_stream_sends_role_progress_answer_and_usage(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/parallel-2"]) as srv:
        c = client(srv)
        with c.chat.completions.with_streaming_response.create(
            model="memdoor/parallel-2",
            messages=user(ADD_PROMPT),
            stream=True,
            stream_options={"include_usage": True},
        ) as response:
            trace_id = response.headers["x-memdoor-trace-id"]
            assert response.headers["content-type"].startswith("text/event-stream")
            chunks = list(response.parse())
    assert all(ch.id == f"chatcmpl-{trace_id}" and ch.object == "chat.completion.chunk" for ch in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    progress = "".join(
        ch.choices[0].delta.model_extra.get("reasoning_content") or "" for ch in chunks if ch.choices
    )
    assert "draft" in progress and "2/2 public tests passed" in progress
    content = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert content == f"```python\n{GOOD}\n```"
    finals = [ch for ch in chunks if ch.choices and ch.choices[0].finish_reason]
    assert [ch.choices[0].finish_reason for ch in finals] == ["stop"]
    assert finals[0].model_extra["memdoor"]["trace_id"] == trace_id
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


def test_raw_stream_ends_with_done_and_comments_mode_hides_progress(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"], progress="comments") as srv:
        body = {"model": "memdoor/single", "messages": user(ADD_PROMPT), "stream": True}
        with httpx.stream("POST", f"{srv.base_url}/chat/completions", json=body, timeout=120) as r:
            assert r.status_code == 200
            lines = [line for line in r.iter_lines() if line]
    comments = [line for line in lines if line.startswith(":")]
    data = [line.removeprefix("data: ") for line in lines if line.startswith("data: ")]
    assert any("draft" in line for line in comments)
    assert data[-1] == "[DONE]"
    events = [json.loads(d) for d in data[:-1]]
    assert not any("reasoning_content" in e["choices"][0]["delta"] for e in events if e["choices"])
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events) == f"```python\n{GOOD}\n```"


def test_a_follow_up_keeps_the_earlier_turns_and_their_examples(sandbox):
    seen = []

    def respond(messages):
        seen.append(messages[-1]["content"])
        return fenced(GOOD)

    models = {"scripted:s": scripted("scripted:s", respond=respond)}
    with running(models, sandbox, teams=["memdoor/single"]) as srv:
        answer = client(srv).chat.completions.create(
            model="memdoor/single",
            messages=[
                {"role": "user", "content": ADD_PROMPT},
                {"role": "assistant", "content": fenced(BAD)},
                {"role": "user", "content": "That is wrong, fix it."},
            ],
        )
    assert answer.model_extra["memdoor"]["tests"]["source"] == "prompt"
    assert "That is wrong, fix it." in seen[0] and "Earlier in the conversation" in seen[0]
    assert "return a - b" in seen[0]


def test_team_memory_does_not_grow_with_requests(sandbox, tmp_path):
    import asyncio

    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, trace_dir=tmp_path, teams=["memdoor/parallel-2"]) as srv:
        c = client(srv)
        ids = [
            c.chat.completions.with_raw_response.create(
                model="memdoor/parallel-2", messages=user(ADD_PROMPT)
            ).headers["x-memdoor-trace-id"]
            for _ in range(3)
        ]
        memory = srv.server.config.app.state.service.env.memory
        assert asyncio.run(memory.tasks()) == []  # every run's entries were dropped...
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == sorted(ids)  # ...once its trace was saved
