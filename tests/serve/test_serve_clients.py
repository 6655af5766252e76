"""What real clients send: sampling settings the team reports on, and browser pages (CORS) of a configured origin."""

from __future__ import annotations

import httpx
import pytest
from serve_helpers import ADD_PROMPT, GOOD, WAIT, client, fenced, running, scripted, user

from memdoor.commands.serve import build_config, configure
from memdoor.core.errors import UsageError
from memdoor.models.scripted import ScriptedModel
from memdoor.server.config import ServeConfig


def test_the_answer_says_what_became_of_the_clients_settings(sandbox):
    seen: list[dict] = []

    class Recording(ScriptedModel):
        async def complete(self, messages, **kw):
            seen.append(kw)
            return await super().complete(messages, **kw)

    models = {"scripted:good": Recording([fenced(GOOD)], spec="scripted:good", cycle=True)}
    with running(models, sandbox, teams=["memdoor/parallel-2"], max_tokens=512) as srv:
        answer = client(srv).chat.completions.create(
            model="memdoor/parallel-2",
            messages=user(ADD_PROMPT),
            temperature=0.0,
            max_tokens=100,
            seed=7,
            top_p=0.5,
        )
    settings = answer.model_extra["memdoor"]["client_settings"]
    assert settings["max_tokens"] == {"asked": 100, "applied": 100}
    assert settings["seed"] == {"asked": 7, "applied": 7}
    assert settings["temperature"]["asked"] == 0.0 and settings["temperature"]["applied"] is None
    assert "own temperature" in settings["temperature"]["note"]
    assert settings["ignored"] == ["top_p"]
    # What the agents were really asked: the client's cap, their own temperatures.
    assert {kw["max_tokens"] for kw in seen} == {100}
    assert len({kw["temperature"] for kw in seen}) == 2


def test_a_cap_above_the_servers_is_lowered_and_says_so(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"], max_tokens=256) as srv:
        answer = client(srv).chat.completions.create(
            model="memdoor/single", messages=user(ADD_PROMPT), max_tokens=4000
        )
    settings = answer.model_extra["memdoor"]["client_settings"]
    assert settings["max_tokens"] == {"asked": 4000, "applied": 256}
    assert "temperature" not in settings and "ignored" not in settings


def test_n_above_one_is_refused_naming_the_field(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"]) as srv:
        r = httpx.post(
            srv.base_url + "/chat/completions",
            json={"model": "memdoor/single", "messages": user(ADD_PROMPT), "n": 2},
            timeout=WAIT,
        )
    assert r.status_code == 400
    assert r.json()["error"]["param"] == "n" and "one answer" in r.json()["error"]["message"]


def _preflight(srv, origin: str) -> httpx.Response:
    return httpx.options(
        srv.base_url + "/chat/completions",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization,content-type,x-stainless-os",
        },
        timeout=WAIT,
    )


def test_only_a_configured_origin_may_call_from_a_browser(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    allowed = "http://127.0.0.1:5173"
    with running(models, sandbox, teams=["memdoor/single"], cors_origins=[allowed]) as srv:
        ok = _preflight(srv, allowed)
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == allowed
        assert "POST" in ok.headers["access-control-allow-methods"]
        other = _preflight(srv, "https://evil.example")
        assert "access-control-allow-origin" not in other.headers
        answer = httpx.post(
            srv.base_url + "/chat/completions",
            json={"model": "memdoor/single", "messages": user(ADD_PROMPT)},
            headers={"origin": allowed},
            timeout=WAIT,
        )
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == allowed
        assert "x-memdoor-trace-id" in answer.headers["access-control-expose-headers"]


def test_without_origins_no_page_may_read_the_answers(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"]) as srv:
        r = _preflight(srv, "http://127.0.0.1:5173")
    assert "access-control-allow-origin" not in r.headers


@pytest.mark.parametrize("origin", ["*", "http://host/path", "ftp://host", "host:80", "http://"])
def test_a_bad_origin_is_a_usage_error(origin):
    import argparse

    p = argparse.ArgumentParser()
    configure(p)
    args = p.parse_args(["--cors-origin", origin])
    with pytest.raises(UsageError, match="cors-origin"):
        build_config(args)


def test_good_origins_are_kept():
    config = ServeConfig(
        cors_origins=["https://editor.example:8443", "http://[::1]:3000", "http://localhost"]
    )
    assert len(config.cors_origins) == 3
