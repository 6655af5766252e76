"""Errors in OpenAI's shape, through the official client and raw HTTP: 404, 400, 401, 405, 502."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from serve_helpers import ADD_PROMPT, GOOD, client, fenced, running, scripted, user


def shape(body: dict) -> dict:
    """The error object, checked to have exactly OpenAI's four fields."""
    error = body.get("error", body)
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert "Traceback" not in error["message"]
    return error


@pytest.fixture(scope="module")
def server(sandbox):
    models = {
        "scripted:good": scripted("scripted:good", fenced(GOOD)),
        "scripted:prose": scripted("scripted:prose", "I cannot help."),
    }
    with running(models, sandbox, models=["scripted:good"], teams=["memdoor/single"]) as srv:
        yield srv


def test_unknown_model_is_404_model_not_found(server):
    with pytest.raises(openai.NotFoundError) as e:
        client(server).chat.completions.create(model="memdoor/parallel-7", messages=user(ADD_PROMPT))
    error = shape(e.value.body)
    assert error["code"] == "model_not_found" and error["param"] == "model"
    assert "memdoor/single" in error["message"]  # names what is served
    with pytest.raises(openai.NotFoundError):
        client(server).models.retrieve("gpt-4o")


def test_aliases_of_a_served_team_are_accepted(server):
    answer = client(server).chat.completions.create(model="single", messages=user(ADD_PROMPT))
    assert answer.model == "memdoor/single"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "memdoor/single"}, "messages"),
        ({"model": "memdoor/single", "messages": []}, "messages"),
        ({"model": "memdoor/single", "messages": [{"role": "wizard", "content": "x"}]}, "messages.0.role"),
        ({"model": "memdoor/single", "messages": user("x"), "stream": "often"}, "stream"),
        ({"model": "memdoor/single", "messages": user("x"), "memdoor": {"timeout": -1}}, "memdoor.timeout"),
    ],
)
def test_invalid_bodies_are_400_naming_the_field(server, body, param):
    r = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=60)
    assert r.status_code == 400
    error = shape(r.json())
    assert (
        error["param"] == param
        and error["type"] == "invalid_request_error"
        and error["code"] == "invalid_body"
    )
    assert r.headers["x-should-retry"] == "false"


def test_a_body_that_is_not_json_is_400(server):
    r = httpx.post(
        f"{server.base_url}/chat/completions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400 and shape(r.json())["code"] == "invalid_body"
    r = httpx.post(f"{server.base_url}/chat/completions", json=[1, 2], timeout=60)
    assert r.status_code == 400


def test_the_official_client_sees_a_bad_body_as_a_bad_request(server):
    """400, as OpenAI answers a malformed body (it was 422: the client's UnprocessableEntityError)."""
    with pytest.raises(openai.BadRequestError) as e:
        client(server).chat.completions.create(model="memdoor/single", messages=[])
    assert shape(e.value.body)["param"] == "messages" and shape(e.value.body)["code"] == "invalid_body"


def test_requests_a_team_cannot_serve_are_400(server):
    with pytest.raises(openai.BadRequestError) as e:
        client(server).chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT), n=2)
    assert shape(e.value.body)["param"] == "n"
    with pytest.raises(openai.BadRequestError) as e:
        client(server).chat.completions.create(
            model="memdoor/single", messages=[{"role": "system", "content": "You are helpful."}]
        )
    assert shape(e.value.body)["param"] == "messages"


def test_unknown_routes_and_methods_answer_in_the_error_shape(server):
    r = httpx.get(f"{server.base_url}/completions", timeout=60)
    assert r.status_code == 404 and shape(r.json())["code"] == "not_found"
    r = httpx.get(f"{server.base_url}/chat/completions", timeout=60)
    assert r.status_code == 405 and shape(r.json())["code"] == "method_not_allowed"


def test_no_code_from_the_team_is_502_without_retry(sandbox):
    models = {"scripted:prose": scripted("scripted:prose", "I would rather not write code.")}
    with (
        running(models, sandbox, teams=["memdoor/single"]) as srv,
        pytest.raises(openai.InternalServerError) as e,
    ):
        client(srv, max_retries=2).chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))
    assert e.value.status_code == 502
    assert shape(e.value.body)["code"] == "no_solution"
    assert e.value.response.headers["x-should-retry"] == "false"
    assert e.value.response.headers["x-memdoor-trace-id"]
    assert models["scripted:prose"].calls and len(models["scripted:prose"].calls) == 1  # not retried


def test_a_failing_model_is_502_naming_the_error(sandbox):
    from memdoor.core.errors import ModelUnavailable

    def respond(messages):
        return ModelUnavailable("connection refused by the inference server")

    models = {"scripted:down": scripted("scripted:down", respond=respond)}
    with (
        running(models, sandbox, teams=["memdoor/parallel-2"]) as srv,
        pytest.raises(openai.APIStatusError) as e,
    ):
        client(srv).chat.completions.create(model="memdoor/parallel-2", messages=user(ADD_PROMPT))
    assert e.value.status_code == 502
    assert "connection refused" in shape(e.value.body)["message"]


@pytest.fixture(scope="class")
def guarded(sandbox):
    """A server that asks for a bearer token, shared by TestAuth's tests."""
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"], token="s3cret") as srv:
        yield srv


class TestAuth:
    def test_missing_or_wrong_token_is_401(self, guarded):
        with pytest.raises(openai.AuthenticationError) as e:
            client(guarded, api_key="wrong").models.list()
        assert shape(e.value.body)["code"] == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            client(guarded, api_key="wrong").chat.completions.create(
                model="memdoor/single", messages=user(ADD_PROMPT)
            )
        r = httpx.get(f"{guarded.base_url}/models", timeout=60)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        r = httpx.post(f"{guarded.base_url}/chat/completions", json={}, timeout=60)
        assert r.status_code == 401  # the token is checked before the body

    def test_the_right_token_is_served(self, guarded):
        c = client(guarded, api_key="s3cret")
        assert [m.id for m in c.models.list()] == ["memdoor/single"]
        answer = c.chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))
        assert GOOD in answer.choices[0].message.content

    def test_health_needs_no_token(self, guarded):
        r = httpx.get(guarded.base_url.removesuffix("/v1") + "/health", timeout=60)
        assert r.status_code == 200 and r.json()["status"] == "ok"


def test_a_bug_is_500_without_details(sandbox):
    def respond(messages):  # not a ModelError: nothing on the way catches it
        return ValueError("secret internal detail")

    models = {"scripted:bug": scripted("scripted:bug", respond=respond)}
    with running(models, sandbox, teams=["memdoor/single"]) as srv:
        for stream in (False, True):
            r = httpx.post(
                f"{srv.base_url}/chat/completions",
                json={
                    "model": "memdoor/single",
                    "messages": user("Write a function `f(x)`."),
                    "stream": stream,
                },
                timeout=60,
            )
            assert r.status_code == 500
            error = shape(r.json())
            assert error["code"] == "internal_error"
            assert "secret internal detail" not in r.text and "ValueError" not in r.text


def test_a_body_over_the_limit_is_413(sandbox):
    models = {"scripted:good": scripted("scripted:good", fenced(GOOD))}
    with running(models, sandbox, teams=["memdoor/single"], max_body_bytes=4096) as srv:
        big = {"model": "memdoor/single", "messages": user("x" * 10_000)}
        r = httpx.post(f"{srv.base_url}/chat/completions", json=big, timeout=60)
        assert r.status_code == 413 and shape(r.json())["code"] == "request_too_large"

        def chunks():  # no content-length: the limit holds while reading
            yield b'{"model": "memdoor/single", "messages": [{"role": "user", "content": "'
            for _ in range(10):
                yield b"y" * 1000
            yield b'"}]}'

        r = httpx.post(f"{srv.base_url}/chat/completions", content=chunks(), timeout=60)
        assert r.status_code == 413
        ok = client(srv).chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))
        assert GOOD in ok.choices[0].message.content


def post_raw(srv, raw: str | bytes, content_type: str = "application/json") -> httpx.Response:
    """A completion request with exactly this body and content-type (no client reformats it)."""
    body = raw.encode() if isinstance(raw, str) else raw
    return httpx.post(
        f"{srv.base_url}/chat/completions", content=body, headers={"content-type": content_type}, timeout=120
    )


ADD_BODY = json.dumps({"model": "memdoor/single", "messages": user(ADD_PROMPT)})


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
)
def test_a_body_that_is_not_declared_json_is_415(server, content_type):
    r = post_raw(server, ADD_BODY, content_type)
    assert r.status_code == 415
    error = shape(r.json())
    assert error["code"] == "unsupported_media_type" and error["type"] == "invalid_request_error"
    assert content_type.split(";")[0] in error["message"]
    assert r.headers["x-should-retry"] == "false"


def test_json_with_a_charset_is_json(server):
    r = post_raw(server, ADD_BODY, "application/json; charset=utf-8")
    assert r.status_code == 200 and GOOD in r.json()["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 200_000 + "]" * 200_000,
        '{"model": "memdoor/single", "messages": [{"role": "user", "content": "x"}], "user": '
        + "[" * 200_000
        + "]" * 200_000
        + "}",
        '{"model": "memdoor/single", "messages": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["array", "extra-field", "messages"],
)
def test_a_deeply_nested_body_is_400_and_the_server_goes_on(server, raw):
    r = post_raw(server, raw)
    assert r.status_code == 400, r.text[:500]
    error = shape(r.json())
    assert error["code"] == "invalid_body" and "nested too deeply" in error["message"]
    ok = client(server).chat.completions.create(model="memdoor/single", messages=user(ADD_PROMPT))
    assert GOOD in ok.choices[0].message.content


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ('{"model": "memdoor/single", "messages": MSGS, "seed": -1}', "seed"),
        ('{"model": "memdoor/single", "messages": MSGS, "seed": 1e400}', "seed"),
        ('{"model": "memdoor/single", "messages": MSGS, "seed": 99999999999999999999}', "seed"),
        (
            '{"model": "memdoor/single", "messages": MSGS, "memdoor": {"timeout": Infinity}}',
            "memdoor.timeout",
        ),
        ('{"model": "memdoor/single", "messages": MSGS, "memdoor": {"timeout": NaN}}', "memdoor.timeout"),
        ('{"model": "memdoor/single", "messages": MSGS, "temperature": NaN}', "temperature"),
        ('{"model": "memdoor/single", "messages": MSGS, "max_tokens": "lots"}', "max_tokens"),
        (
            '{"model": "memdoor/single", "messages": MSGS, "memdoor": {"budget_tokens": 0}}',
            "memdoor.budget_tokens",
        ),
        (
            '{"model": "memdoor/single", "messages": [{"role": "user", "content": 7}]}',
            "messages.0.content.str",
        ),
    ],
)
def test_out_of_range_values_are_400_naming_the_field(server, raw, param):
    raw = raw.replace("MSGS", json.dumps(user(ADD_PROMPT)))
    r = post_raw(server, raw)
    assert r.status_code == 400, r.text[:500]
    assert shape(r.json())["param"] == param


def test_a_request_without_examples_is_served_but_never_graded_as_passed(sandbox):
    """Not a load error: the team answers. With no test inputs written (--test-inputs 0), nothing
    grades the answer, and the answer says so instead of claiming 0/0 passed."""
    models = {"scripted:good": scripted("scripted:good", fenced("def double(x):\n    return 2 * x"))}
    with running(models, sandbox, teams=["memdoor/single"], test_inputs=0) as srv:
        answer = client(srv).chat.completions.create(
            model="memdoor/single", messages=user("Write a function `double(x)` returning twice x.")
        )
    tests = answer.model_extra["memdoor"]["tests"]
    assert "return 2 * x" in answer.choices[0].message.content
    assert tests["source"] == "none" and tests["count"] == 0
    assert tests["status"] == "no_tests" and tests["total"] == 0
