"""Limits: the queue (429), the time limit and the token budget (504), clients that go away, and the
reading of a request, which holds no other client up.

Gated models hold a team in the middle of a call until the test lets it go, so "busy" is a state the
test controls, never a matter of timing.
"""

from __future__ import annotations

import httpx
import openai
import pytest
from serve_helpers import (
    ADD_PROMPT,
    GOOD,
    GatedModel,
    Held,
    InThread,
    client,
    fenced,
    health,
    health_meanwhile,
    running,
    scripted,
    user,
    wait_until,
)

import memdoor.server.app as app_module
import memdoor.server.service as service_module


def error_of(e: openai.APIStatusError) -> dict:
    return e.body if "code" in e.body else e.body["error"]


def test_a_full_queue_answers_429_and_every_admitted_request_is_answered(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], concurrency=1, max_queue=1) as srv:
        c = client(srv)
        ask = lambda: c.chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))  # noqa: E731
        first = InThread(ask)
        wait_until(gated.entered.is_set, "the first team to call its model")
        second = InThread(ask)
        wait_until(lambda: health(srv)["waiting"] == 1, "the second request to wait")
        with pytest.raises(openai.RateLimitError) as e:
            ask()
        assert e.value.status_code == 429
        assert error_of(e.value)["code"] == "queue_full"
        assert e.value.response.headers["retry-after"] == "2"
        assert e.value.response.headers["x-should-retry"] == "true"
        gated.gate.set()
        for req in (first, second):
            assert GOOD in req.result().choices[0].message.content
        assert health(srv) == {"status": "ok", "running": 0, "waiting": 0}


def test_a_request_over_its_time_limit_is_504_and_frees_its_slot(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], max_queue=0) as srv:
        c = client(srv)
        with pytest.raises(openai.APIStatusError) as e:
            c.chat.completions.create(
                model="memdoor/single", messages=user(ADD_PROMPT), extra_body={"memdoor": {"timeout": 0.5}}
            )
        assert e.value.status_code == 504
        error = error_of(e.value)
        assert error["code"] == "timeout" and error["type"] == "timeout_error"
        assert "while the team worked" in error["message"]
        assert e.value.response.headers["x-should-retry"] == "false"
        assert e.value.response.headers["x-memdoor-trace-id"]
        assert gated.cancelled.is_set()  # the team was stopped, not left running
        wait_until(lambda: health(srv)["running"] == 0, "the slot to be free")
        gated.gate.set()
        answer = c.chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))
        assert GOOD in answer.choices[0].message.content


def test_the_time_limit_counts_the_wait_for_a_free_team(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], concurrency=1, max_queue=4) as srv:
        c = client(srv)
        first = InThread(lambda: c.chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT)))
        wait_until(gated.entered.is_set, "the first team to call its model")
        with pytest.raises(openai.APIStatusError) as e:
            c.chat.completions.create(
                model="memdoor/single", messages=user(ADD_PROMPT), extra_body={"memdoor": {"timeout": 0.3}}
            )
        assert e.value.status_code == 504
        assert "while waiting for a free team" in error_of(e.value)["message"]
        assert "x-memdoor-trace-id" not in e.value.response.headers  # no team ever started
        gated.gate.set()
        assert GOOD in first.result().choices[0].message.content


def test_a_server_time_limit_applies_to_every_request(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], timeout_s=0.5) as srv:
        with pytest.raises(openai.APIStatusError) as e:
            # asking for more time than the server allows does not extend it
            client(srv).chat.completions.create(
                model="memdoor/single", messages=user(ADD_PROMPT), extra_body={"memdoor": {"timeout": 3600}}
            )
        assert e.value.status_code == 504
        gated.gate.set()


def test_a_team_over_its_token_budget_is_504(sandbox):
    wordy = fenced(GOOD) + " padding" * 400
    models = {"scripted:wordy": scripted("scripted:wordy", wordy)}
    with running(
        models, sandbox, teams=["memdoor/parallel-2", "memdoor/sequential-2"], budget_tokens=300
    ) as srv:
        for team in ("memdoor/parallel-2", "memdoor/sequential-2"):
            with pytest.raises(openai.APIStatusError) as e:
                client(srv).chat.completions.create(model=team, messages=user(ADD_PROMPT))
            assert e.value.status_code == 504
            error = error_of(e.value)
            assert error["code"] == "budget_exceeded"
            assert "300" in error["message"]
            assert e.value.response.headers["x-memdoor-trace-id"]
        with pytest.raises(openai.APIStatusError) as e:  # a request may lower the budget, never raise it
            client(srv).chat.completions.create(
                model="memdoor/parallel-2",
                messages=user(ADD_PROMPT),
                extra_body={"memdoor": {"budget_tokens": 10**6}},
            )
        assert e.value.status_code == 504


def test_a_request_budget_lowers_the_servers(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"]) as srv:
        c = client(srv)
        assert (
            c.chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT)).usage.total_tokens
            > 20
        )
        with pytest.raises(openai.APIStatusError) as e:
            c.chat.completions.create(
                model="memdoor/single",
                messages=user(ADD_PROMPT),
                extra_body={"memdoor": {"budget_tokens": 20}},
            )
        assert e.value.status_code == 504 and error_of(e.value)["code"] == "budget_exceeded"


def test_a_time_limit_reached_mid_stream_is_an_error_event(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"]) as srv:
        stream = client(srv).chat.completions.create(
            model="memdoor/single",
            messages=user(ADD_PROMPT),
            stream=True,
            extra_body={"memdoor": {"timeout": 1.0}},
        )
        seen = []
        with pytest.raises(openai.APIError) as e:
            for chunk in stream:
                seen.append(chunk)
        assert seen and seen[0].choices[0].delta.role == "assistant"  # the stream had started
        assert e.value.body["code"] == "timeout"
        gated.gate.set()


def test_a_client_that_goes_away_stops_its_team(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"]) as srv:
        body = {"model": "memdoor/single", "messages": user(ADD_PROMPT)}
        with httpx.Client(timeout=httpx.Timeout(60, read=0.5)) as h, pytest.raises(httpx.ReadTimeout):
            h.post(f"{srv.base_url}/chat/completions", json=body)
        wait_until(gated.cancelled.is_set, "the team to be cancelled")
        wait_until(lambda: health(srv) == {"status": "ok", "running": 0, "waiting": 0}, "the slot to be free")


def test_a_stream_client_that_goes_away_stops_its_team(sandbox):
    gated = GatedModel(fenced(GOOD))
    with running({"gated": gated}, sandbox, teams=["memdoor/single"]) as srv:
        body = {"model": "memdoor/single", "messages": user(ADD_PROMPT), "stream": True}
        with httpx.stream("POST", f"{srv.base_url}/chat/completions", json=body, timeout=60) as r:
            assert r.status_code == 200
            next(r.iter_lines())  # the role chunk: the team has started
            wait_until(gated.entered.is_set, "the team to call its model")
        wait_until(gated.cancelled.is_set, "the team to be cancelled")
        wait_until(lambda: health(srv) == {"status": "ok", "running": 0, "waiting": 0}, "the slot to be free")


@pytest.mark.parametrize(
    ("module", "step"),
    [(app_module, "parse_body"), (service_module, "chat_problem")],
    ids=["the body", "the request"],
)
def test_health_and_other_clients_are_answered_while_a_request_is_read(sandbox, monkeypatch, module, step):
    """Parsing a body and reading its request (the function asked for, the examples: work on the whole text,
    up to the 4 MiB body limit) run off the event loop. Before, they ran on it: one request of 40 KB of
    "f(" held /health and every other client 22 s."""
    held = Held(getattr(module, step))
    monkeypatch.setattr(module, step, held)
    with running(
        {"scripted:good": scripted("scripted:good", fenced(GOOD))}, sandbox, teams=["memdoor/single"]
    ) as srv:
        answer = InThread(
            lambda: client(srv).chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))
        )
        try:
            assert held.entered.wait(60), "the request was not read"
            assert health_meanwhile(srv) == {"status": "ok", "running": 0, "waiting": 0}
            assert [m.id for m in client(srv).models.list().data] == ["memdoor/single"]
        finally:
            held.gate.set()
        assert "return a + b" in answer.result().choices[0].message.content
