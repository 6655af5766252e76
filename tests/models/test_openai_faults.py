"""The ``openai`` backend behind a fault-injecting proxy in front of a real HTTP server.

Shows that no request is lost (each logical request gets its own correct answer once the fault
clears), that retries are bounded (attempts counted at the proxy), and that an endpoint that never
recovers yields a clear error of the right type. Nothing asserts on speed: the request timeout is
generous except in the tests of the ``slow`` fault, which hangs, and those send one request at a time so
a healthy attempt (a few ms on loopback) never comes near their 1 s timeout.
"""

from __future__ import annotations

import asyncio
import random
import socket

import pytest
from fakeserver import FakeOpenAIServer, answer_text
from faultproxy import FaultProxy

from memdoor.core.errors import ModelError, ModelTimeout, ModelUnavailable, RateLimited
from memdoor.models.openai_model import OpenAIConfig, OpenAIModel, RequestRejected

CFG = OpenAIConfig(
    request_timeout_s=30, backoff_base_s=0.01, backoff_max_s=0.05, max_retries=3, concurrency=16
)
SLOW_CFG = CFG.model_copy(update={"request_timeout_s": 1.0, "max_retries": 2})


def ask(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


async def test_each_fault_is_retried_until_the_right_answer(server):
    script = {
        "p-429": ["429", "429"],
        "p-500": ["500"],
        "p-drop": ["drop", "drop"],
        "p-malformed": ["malformed"],
        "p-truncated": ["truncated"],
        "p-html": ["html"],
        "p-shape": ["shape", "500", "drop"],
        "p-clean": [],
    }
    with FaultProxy(server.port, script=script) as proxy:
        model = OpenAIModel("fake-model", proxy.base_url, config=CFG)
        try:
            results = await asyncio.gather(*(model.complete(ask(p), logprobs=True) for p in script))
        finally:
            await model.aclose()
    for prompt, faults, resp in zip(script, script.values(), results, strict=True):
        assert resp.completions[0].text == answer_text(prompt, 0, None)
        assert resp.completions[0].logprobs
        assert resp.usage.retries == len(faults), prompt
        assert proxy.attempts[prompt] == len(faults) + 1, prompt


async def test_no_request_lost_under_mixed_faults(server):
    rng = random.Random(3)
    kinds = ["429", "500", "drop", "malformed", "truncated", "html", "shape"]
    faults = [rng.choice(kinds) for _ in range(40)]
    prompts = [f"problem {i}" for i in range(24)]
    cfg = CFG.model_copy(update={"max_retries": len(faults)})
    with FaultProxy(server.port, queue=faults) as proxy:
        model = OpenAIModel("fake-model", proxy.base_url, config=cfg)
        try:
            results = await asyncio.gather(*(model.complete(ask(p), seed=i) for i, p in enumerate(prompts)))
        finally:
            await model.aclose()
    # every logical request got its own answer, exactly once
    assert [r.completions[0].text for r in results] == [answer_text(p, 0, i) for i, p in enumerate(prompts)]
    # every fault cost exactly one retry, and nothing else was retried or sent twice
    assert proxy.total_attempts == len(prompts) + len(faults)
    assert sum(r.usage.retries for r in results) == len(faults)
    for p, r in zip(prompts, results, strict=True):
        assert proxy.attempts[p] == r.usage.retries + 1
    answered = sorted(req["messages"][-1]["content"] for req in server.requests)
    # the upstream answered every prompt; twice only those whose first answer the proxy truncated
    truncated = proxy.faults_applied["truncated"]
    assert set(answered) == set(prompts)
    assert len(answered) == len(prompts) + truncated


async def test_fan_out_survives_faults(server):
    server.config.ignore_n = True
    with FaultProxy(server.port, queue=["500", "drop", "429", "truncated"]) as proxy:
        model = OpenAIModel("fake-model", proxy.base_url, config=CFG.model_copy(update={"max_retries": 4}))
        try:
            resp = await model.complete(ask("sum"), n=3, seed=1)
        finally:
            await model.aclose()
    assert [c.text for c in resp.completions] == [answer_text("sum", 0, s) for s in (1, 2, 3)]
    assert resp.usage.retries == 4
    assert proxy.total_attempts == 3 + 4


async def test_slow_answer_times_out_and_is_retried(server):
    with FaultProxy(server.port, script={"think": ["slow"]}) as proxy:
        model = OpenAIModel("fake-model", proxy.base_url, config=SLOW_CFG)
        try:
            resp = await model.complete(ask("think"))
        finally:
            await model.aclose()
    assert resp.completions[0].text == answer_text("think", 0, None)
    assert resp.usage.retries == 1
    assert proxy.attempts["think"] == 2


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("500", ModelUnavailable),
        ("429", RateLimited),
        ("slow", ModelTimeout),
        ("drop", ModelUnavailable),
        ("malformed", ModelUnavailable),
        ("truncated", ModelUnavailable),
        ("html", ModelUnavailable),
        ("shape", ModelUnavailable),
    ],
)
async def test_endpoint_that_never_recovers(server, fault, error):
    cfg = SLOW_CFG if fault == "slow" else CFG
    with FaultProxy(server.port, always=fault) as proxy:
        model = OpenAIModel("fake-model", proxy.base_url, config=cfg)
        try:
            with pytest.raises(error) as info:
                await model.complete(ask("doomed"))
        finally:
            await model.aclose()
    assert proxy.total_attempts == cfg.max_retries + 1
    e = info.value
    assert e.retries == cfg.max_retries
    assert e.latency_s > 0
    msg = str(e)
    assert "\n" not in msg
    assert msg.startswith(f"openai:fake-model@{proxy.base_url}: ")
    assert f"gave up after {cfg.max_retries + 1} attempts" in msg


async def test_total_retry_time_bounds_the_attempts(server):
    # Retry-After 0.2 s is honoured, so within 1 s of retrying there is room for at most 5 retries,
    # although max_retries would allow 1000 (and the backoff alone would wait only milliseconds).
    cfg = CFG.model_copy(
        update={"max_retries": 1000, "max_total_retry_seconds": 1.0, "backoff_base_s": 0.001}
    )
    with FaultProxy(server.port, always="429", retry_after=0.2) as proxy:
        model = OpenAIModel("fake-model", proxy.base_url, config=cfg)
        try:
            with pytest.raises(RateLimited) as info:
                await model.complete(ask("busy"))
        finally:
            await model.aclose()
    assert 1 <= proxy.total_attempts <= 6
    assert info.value.retries == proxy.total_attempts - 1


async def test_refused_connection_is_unavailable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    model = OpenAIModel("fake-model", f"http://127.0.0.1:{port}/v1", config=CFG)
    try:
        with pytest.raises(ModelUnavailable) as info:
            await model.complete(ask("anyone?"))
    finally:
        await model.aclose()
    assert info.value.retries == CFG.max_retries
    assert "connection" in str(info.value)


async def test_client_error_after_a_retry_is_not_retried_again(server):
    # a 500, then the real server's 404 for an unknown model: one retry, then a plain ModelError
    with FaultProxy(server.port, queue=["500"]) as proxy:
        model = OpenAIModel("missing-model", proxy.base_url, config=CFG)
        try:
            with pytest.raises(ModelError) as info:
                await model.complete(ask("x"))
        finally:
            await model.aclose()
    assert isinstance(info.value, RequestRejected)
    assert not isinstance(info.value, RateLimited | ModelTimeout | ModelUnavailable)
    assert info.value.status == 404
    assert proxy.total_attempts == 2
    assert info.value.retries == 1
