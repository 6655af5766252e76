"""The ``openai`` backend against a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import asyncio

import pytest
from fakeserver import FakeOpenAIServer, FakeServerConfig, answer_text, token_logprobs

from memdoor.core.errors import ModelError, ModelSpecError, ModelTimeout, ModelUnavailable, RateLimited
from memdoor.core.protocols import Model
from memdoor.models.openai_model import (
    DEFAULT_BASE_URL,
    OpenAIConfig,
    OpenAIModel,
    RequestRejected,
    parse_spec,
)
from memdoor.models.pool import ModelPool

USER = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "add two numbers"}]
FAST = OpenAIConfig(request_timeout_s=5, backoff_base_s=0.01, max_retries=2)


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture
def lazy_server():
    """A server that ignores ``n``, like llama-cpp-python's."""
    with FakeOpenAIServer(FakeServerConfig(ignore_n=True)) as s:
        yield s


async def test_completion_text_logprobs_and_usage(server):
    model = OpenAIModel("fake-model", server.base_url, config=FAST)
    try:
        assert isinstance(model, Model)
        resp = await model.complete(USER, logprobs=True, seed=11, temperature=0.7, stop=["```"])
    finally:
        await model.aclose()
    text = answer_text("add two numbers", 0, 11)
    assert resp.model == f"openai:fake-model@{server.base_url}"
    [c] = resp.completions
    assert c.text == text
    assert c.finish_reason == "stop"
    assert c.logprobs == pytest.approx(token_logprobs(text))
    assert resp.usage.prompt_tokens == 5  # "be brief" + "add two numbers"
    assert resp.usage.completion_tokens == len(text.split())
    assert resp.usage.retries == 0
    assert resp.usage.latency_s > 0
    [sent] = server.requests
    assert sent["model"] == "fake-model"
    assert sent["messages"] == USER
    assert sent["logprobs"] is True
    assert sent["seed"] == 11
    assert sent["temperature"] == 0.7
    assert sent["stop"] == ["```"]
    assert sent["max_tokens"] == 1024
    assert "n" not in sent


async def test_logprobs_none_when_not_asked_or_not_given(server):
    model = OpenAIModel("fake-model", server.base_url, config=FAST)
    try:
        resp = await model.complete(USER)
        assert resp.completions[0].logprobs is None
        assert "logprobs" not in server.requests[-1]
        server.config.give_logprobs = False
        resp = await model.complete(USER, logprobs=True)
        assert resp.completions[0].logprobs is None
        assert resp.completions[0].mean_logprob is None
    finally:
        await model.aclose()


async def test_max_tokens_field_and_length_finish(server):
    cfg = FAST.model_copy(update={"max_tokens_field": "max_completion_tokens"})
    model = OpenAIModel("fake-model", server.base_url, config=cfg)
    try:
        resp = await model.complete(USER, max_tokens=3)
    finally:
        await model.aclose()
    assert server.requests[0]["max_completion_tokens"] == 3
    assert "max_tokens" not in server.requests[0]
    # the fake server caps at max_tokens only when it reads max_tokens: the answer is whole here
    assert resp.completions[0].finish_reason == "stop"


async def test_length_finish_reason_is_passed_through(server):
    model = OpenAIModel("fake-model", server.base_url, config=FAST)
    try:
        resp = await model.complete(USER, max_tokens=2)
    finally:
        await model.aclose()
    assert resp.completions[0].finish_reason == "length"
    assert resp.completions[0].text == "answer to"
    assert resp.usage.completion_tokens == 2


async def test_n_in_one_request_when_the_server_honours_it(server):
    model = OpenAIModel("fake-model", server.base_url, config=FAST)
    try:
        resp = await model.complete(USER, n=3, seed=5, logprobs=True)
    finally:
        await model.aclose()
    assert [c.text for c in resp.completions] == [answer_text("add two numbers", k, 5) for k in range(3)]
    assert len(server.requests) == 1
    assert server.requests[0]["n"] == 3
    assert resp.usage.completion_tokens == sum(len(c.text.split()) for c in resp.completions)


async def test_fan_out_when_the_server_ignores_n(lazy_server):
    model = OpenAIModel("fake-model", lazy_server.base_url, config=FAST)
    try:
        resp = await model.complete(USER, n=3, seed=7, logprobs=True)
        # one request asking for 3, then two more with their own seeds
        assert len(lazy_server.requests) == 3
        first, *rest = lazy_server.requests
        assert first.get("seed") == 7
        assert sorted(r.get("seed") for r in rest) == [8, 9]  # sent at once: any arrival order
        texts = [c.text for c in resp.completions]
        assert texts == [answer_text("add two numbers", 0, s) for s in (7, 8, 9)]
        assert all(c.logprobs for c in resp.completions)
        # prompt counted once, completions summed over the three requests
        assert resp.usage.prompt_tokens == 5
        assert resp.usage.completion_tokens == sum(len(t.split()) for t in texts)

        # having learned, the next call fans out at once: exactly n requests, none asking for n
        resp2 = await model.complete(USER, n=2, seed=100)
        later = lazy_server.requests[3:]
        assert len(later) == 2
        assert all("n" not in r for r in later)
        assert sorted(r["seed"] for r in later) == [100, 101]
        assert len(resp2.completions) == 2
    finally:
        await model.aclose()


async def test_fan_out_always_and_never(server, lazy_server):
    always = OpenAIModel("fake-model", server.base_url, config=FAST.model_copy(update={"fan_out": "always"}))
    never = OpenAIModel(
        "fake-model", lazy_server.base_url, config=FAST.model_copy(update={"fan_out": "never"})
    )
    try:
        resp = await always.complete(USER, n=4)
        assert len(resp.completions) == 4
        assert len(server.requests) == 4
        assert all("n" not in r for r in server.requests)
        resp = await never.complete(USER, n=4)
        assert len(resp.completions) == 1  # what the server gave
        assert len(lazy_server.requests) == 1
    finally:
        await always.aclose()
        await never.aclose()


async def test_client_error_is_model_error_at_once(server):
    model = OpenAIModel("no-such-model", server.base_url, config=FAST)
    try:
        with pytest.raises(ModelError) as info:
            await model.complete(USER)
    finally:
        await model.aclose()
    assert not isinstance(info.value, RateLimited | ModelTimeout | ModelUnavailable)
    assert "HTTP 404" in str(info.value)
    assert "no-such-model" in str(info.value)
    assert "\n" not in str(info.value)
    assert len(server.requests) == 1  # never retried


async def test_bad_n_is_model_error(server):
    model = OpenAIModel("fake-model", server.base_url, config=FAST)
    try:
        with pytest.raises(ModelError):
            await model.complete(USER, n=0)
    finally:
        await model.aclose()
    assert server.requests == []


async def test_key_from_environment_reaches_the_server(server, monkeypatch):
    monkeypatch.setenv("MEMDOOR_API_KEY", "sk-memdoor-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test")
    model = OpenAIModel.from_spec(f"fake-model@{server.base_url}")
    try:
        await model.complete(USER)
        monkeypatch.delenv("MEMDOOR_API_KEY")
        stranger = OpenAIModel.from_spec(f"fake-model@{server.base_url}")  # not OpenAI: no OpenAI key
        await stranger.complete(USER)
        await stranger.aclose()
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        other = OpenAIModel.from_spec(f"fake-model@{server.base_url}")
        await other.complete(USER)
        await other.aclose()
        monkeypatch.delenv("OPENAI_API_KEY")
        keyless = OpenAIModel.from_spec(f"fake-model@{server.base_url}")
        await keyless.complete(USER)
        await keyless.aclose()
    finally:
        await model.aclose()
    assert server.authorizations == [
        "Bearer sk-memdoor-test",
        "Bearer EMPTY",
        "Bearer sk-openai-test",
        "Bearer EMPTY",
    ]


async def test_pool_shares_one_concurrency_limit_per_endpoint():
    cfg = OpenAIConfig(concurrency=2, request_timeout_s=30)
    with (
        FakeOpenAIServer(FakeServerConfig(delay=0.1)) as busy,
        FakeOpenAIServer(FakeServerConfig(delay=0.1)) as other,
    ):
        pool = ModelPool(configs={"openai": cfg})
        try:
            # two model names on one server share its 2 slots; another server has its own
            a = pool.get(f"openai:fake-model@{busy.base_url}")
            b = pool.get(f"openai:other-model@{busy.base_url}/")
            c = pool.get(f"openai:fake-model@{other.base_url}")
            assert pool.get(f"openai:fake-model@{busy.base_url}") is a
            prompts = [f"task {i}" for i in range(12)]
            calls = [
                m.complete([{"role": "user", "content": p}])
                for m, p in zip([a, b, c] * 4, prompts, strict=True)
            ]
            results = await asyncio.gather(*calls)
        finally:
            await pool.aclose()
    assert [r.completions[0].text for r in results] == [answer_text(p, 0, None) for p in prompts]
    assert len(busy.requests) == 8
    assert len(other.requests) == 4
    assert busy.peak_in_flight <= 2
    assert other.peak_in_flight <= 2


async def test_model_without_pool_has_its_own_limit(server):
    server.config.delay = 0.05
    model = OpenAIModel("fake-model", server.base_url, config=OpenAIConfig(concurrency=1))
    try:
        await asyncio.gather(*(model.complete([{"role": "user", "content": f"q{i}"}]) for i in range(5)))
    finally:
        await model.aclose()
    assert len(server.requests) == 5
    assert server.peak_in_flight == 1


# ---- specs


def test_spec_with_url():
    p = parse_spec("Qwen/Qwen2.5-Coder-32B-Instruct@http://gpu-box:8000/v1/", env={})
    assert (p.model, p.base_url) == ("Qwen/Qwen2.5-Coder-32B-Instruct", "http://gpu-box:8000/v1")
    p = parse_spec("weird@name@https://user@host.example/v1", env={})
    assert (p.model, p.base_url) == ("weird@name", "https://user@host.example/v1")


def test_spec_without_url_uses_environment_then_openai():
    assert parse_spec("gpt-4o-mini", env={}).base_url == DEFAULT_BASE_URL
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9999/v1"}
    assert parse_spec("gpt-4o-mini", env=env).base_url == "http://127.0.0.1:9999/v1"


@pytest.mark.parametrize(
    "rest",
    [
        "@http://host/v1",  # empty model
        "   @http://host/v1",  # blank model
        "my model@http://host/v1",  # space in the name
        "m@ftp://host/v1",  # not http(s)
        "m@host:8000/v1",  # no scheme
        "m@http://",  # no host
        "m@http://host:notaport/v1",  # bad port
    ],
)
def test_bad_specs_raise_one_clear_line(rest):
    with pytest.raises(ModelSpecError) as info:
        parse_spec(rest, env={})
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("bad model spec 'openai:")


def test_bad_spec_through_the_pool():
    pool = ModelPool()
    with pytest.raises(ModelSpecError):
        pool.get("openai:m@ftp://host")
    with pytest.raises(ModelSpecError):
        pool.get("openai:")


def test_bad_spec_from_the_command_line_exits_2(capsys, tmp_path):
    from memdoor.cli import main

    problems = tmp_path / "p.yaml"
    problems.write_text(
        'id: add-two\nstatement: Read two integers and print their sum.\ntests:\n  - {input: "1 2\\n", output: "3\\n"}\n'
    )
    code = main(["solve", str(problems), "--problem", "add-two", "--model", "openai:m@ftp://host"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("memdoor: ")
    assert "bad model spec" in err
    assert err.count("\n") == 1


async def test_loopback_server_ignores_proxies_from_the_environment(server, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")  # nothing listens there
    model = OpenAIModel("fake-model", server.base_url.replace("127.0.0.1", "localhost"), config=FAST)
    try:
        resp = await model.complete(USER)
    finally:
        await model.aclose()
    assert resp.completions[0].text == answer_text("add two numbers", 0, None)


def test_spec_settings_override_the_config():
    p = parse_spec("m@http://h:1/v1?concurrency=3&request_timeout_s=7.5&fan_out=always", env={})
    assert (p.model, p.base_url) == ("m", "http://h:1/v1")
    cfg = p.config(OpenAIConfig(max_retries=9, concurrency=1))
    assert (cfg.concurrency, cfg.request_timeout_s, cfg.fan_out, cfg.max_retries) == (3, 7.5, "always", 9)
    assert parse_spec("gpt-4o-mini?max_retries=0", env={}).config().max_retries == 0


@pytest.mark.parametrize(
    "rest",
    [
        "m@http://h/v1?concurency=3",  # unknown setting
        "m@http://h/v1?concurrency=zero",  # not a number
        "m@http://h/v1?concurrency=0",  # out of range
        "m@http://h/v1?fan_out=sometimes",
        "m@http://h/v1?concurrency",  # no value
    ],
)
def test_bad_spec_settings(rest):
    with pytest.raises(ModelSpecError) as info:
        parse_spec(rest, env={}).config()
    assert "\n" not in str(info.value)
    assert "openai:m@http://h/v1?" in str(info.value)


async def test_spec_settings_through_the_pool(server):
    server.config.delay = 0.05
    pool = ModelPool(configs={"openai": OpenAIConfig(concurrency=8)})
    try:
        m = pool.get(f"openai:fake-model@{server.base_url}?concurrency=1&max_retries=0")
        assert m.config.concurrency == 1
        assert m.config.max_retries == 0
        await asyncio.gather(*(m.complete([{"role": "user", "content": f"q{i}"}]) for i in range(4)))
    finally:
        await pool.aclose()
    assert server.peak_in_flight == 1


def test_built_outside_the_event_loop_used_inside(server):
    # `memdoor bench` opens its models (validating specs) before it starts its event loop
    pool = ModelPool(configs={"openai": OpenAIConfig(concurrency=2)})
    model = pool.get(f"openai:fake-model@{server.base_url}")

    async def use() -> list[str]:
        try:
            resps = await asyncio.gather(
                *(model.complete([{"role": "user", "content": f"q{i}"}]) for i in range(3))
            )
            return [r.completions[0].text for r in resps]
        finally:
            await pool.aclose()

    assert asyncio.run(use()) == [answer_text(f"q{i}", 0, None) for i in range(3)]


async def test_auto_fans_out_when_the_server_refuses_n():
    # llama.cpp's server answers 400 when n exceeds its slots
    with FakeOpenAIServer(FakeServerConfig(max_n=2)) as server:
        model = OpenAIModel("fake-model", server.base_url, config=FAST)
        try:
            resp = await model.complete(USER, n=4, seed=20)
            assert [c.text for c in resp.completions] == [
                answer_text("add two numbers", 0, s) for s in (20, 21, 22, 23)
            ]
            assert resp.usage.retries == 1  # the refused request
            assert len(server.requests) == 1 + 4
            # learned: the next call fans out at once
            await model.complete(USER, n=2)
            assert len(server.requests) == 5 + 2
        finally:
            await model.aclose()


async def test_refused_n_is_an_error_when_fan_out_is_never():
    with FakeOpenAIServer(FakeServerConfig(max_n=2)) as server:
        model = OpenAIModel(
            "fake-model", server.base_url, config=FAST.model_copy(update={"fan_out": "never"})
        )
        try:
            with pytest.raises(RequestRejected) as info:
                await model.complete(USER, n=3)
        finally:
            await model.aclose()
    assert info.value.status == 400
    assert len(server.requests) == 1


async def test_other_client_errors_do_not_trigger_fan_out(server):
    model = OpenAIModel("no-such-model", server.base_url, config=FAST)
    try:
        with pytest.raises(RequestRejected) as info:
            await model.complete(USER, n=3)
    finally:
        await model.aclose()
    assert info.value.status == 404
    assert len(server.requests) == 1


async def test_usage_counted_from_logprobs_when_the_server_counts_one_choice():
    # llama.cpp's server reports the completion tokens of one choice for n > 1
    with FakeOpenAIServer(FakeServerConfig(usage_of_first_choice_only=True)) as server:
        model = OpenAIModel("fake-model", server.base_url, config=FAST)
        try:
            with_lp = await model.complete(USER, n=3, logprobs=True, seed=1)
            without = await model.complete(USER, n=3, seed=1)
        finally:
            await model.aclose()
    words = [len(c.text.split()) for c in with_lp.completions]
    assert with_lp.usage.completion_tokens == sum(words)
    # without logprobs there is nothing to count from: the server's figure is all there is
    assert without.usage.completion_tokens == words[0]
