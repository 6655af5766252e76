"""The real embedded 0.5B model (slow tier). Few calls, few tokens: CI runs these on 2 cores."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from memdoor.models.catalog import get_entry
from memdoor.models.engine import Engine, EngineConfig, available_cores
from memdoor.models.local import ContextOverflow, LocalModel
from memdoor.models.pool import ModelPool
from memdoor.models.weights import WeightsStore, find_parts

pytestmark = pytest.mark.slow

SMALL = "qwen2.5-coder-0.5b"
ASK = [{"role": "user", "content": "Write a Python function add(a, b) that returns a + b. Only code."}]


def _require_small_model() -> None:
    pytest.importorskip("xllamacpp")
    entry = get_entry(SMALL)
    if not WeightsStore().is_verified(entry) and not find_parts(entry).complete:
        pytest.skip(f"{SMALL} weights not installed ({entry.install_hint})")


@pytest.fixture(scope="module")
def model():
    """One engine for the module (one replica, 5 slots, short contexts), stopped at the end."""
    _require_small_model()
    m = LocalModel(SMALL, config=EngineConfig(slots=5, replicas=1, ctx=1024))
    yield m
    asyncio.run(m.aclose())


def _engine(m: LocalModel) -> Engine:
    [engine] = m.engines
    assert engine.base_url
    return engine


def _slots(m: LocalModel) -> list[dict]:
    e = _engine(m)
    return httpx.get(e.base_url + "/slots", headers=e.headers(), timeout=60, trust_env=False).json()


async def test_completion_has_text_logprobs_and_usage(model):
    r = await model.complete(ASK, temperature=0.0, max_tokens=24, logprobs=True)
    assert r.model == "local:qwen2.5-coder-0.5b"
    [c] = r.completions
    assert "add" in c.text
    assert c.finish_reason in ("stop", "length")
    assert c.logprobs is not None and len(c.logprobs) == r.usage.completion_tokens > 0
    assert all(lp <= 0.0 for lp in c.logprobs)
    assert c.mean_logprob is not None and c.mean_logprob < 0.0
    assert r.usage.prompt_tokens > 10  # the chat template wraps the message
    assert r.usage.latency_s > 0.0
    # without logprobs requested, none are returned
    r2 = await model.complete(ASK, temperature=0.0, max_tokens=4)
    assert r2.completions[0].logprobs is None
    assert r2.usage.completion_tokens <= 4


async def test_n3_gives_three_samples_and_counts_all_their_tokens(model):
    story = [
        {"role": "user", "content": "Invent a name for a new programming language. Reply with one word."}
    ]
    r = await model.complete(story, n=3, temperature=1.0, max_tokens=12, seed=123, logprobs=True)
    assert len(r.completions) == 3
    assert r.usage.completion_tokens == sum(len(c.logprobs or []) for c in r.completions)
    assert r.usage.completion_tokens >= 3
    assert len({c.text for c in r.completions}) >= 2, "each of n samples gets its own seed"


async def test_five_concurrent_calls_all_succeed_in_five_slots(model):
    calls = [model.complete(ASK, temperature=0.8, max_tokens=12, seed=i) for i in range(5)]
    results = await asyncio.gather(*calls)
    assert all(r.completions[0].text and r.usage.completion_tokens > 0 for r in results)
    used = [s for s in _slots(model) if s.get("id_task", -1) >= 0]
    assert len(used) == 5, "the five requests were served side by side, one slot each"


async def test_a_prompt_longer_than_the_context_is_a_clear_error(model):
    with pytest.raises(ContextOverflow) as info:
        await model.complete([{"role": "user", "content": "hello " * 1500}], max_tokens=4)
    assert "ctx=" in str(info.value)


def _tokens_predicted(e: Engine) -> float:
    assert e.base_url
    text = httpx.get(e.base_url + "/metrics", headers=e.headers(), timeout=60, trust_env=False).text
    for line in text.splitlines():
        if line.startswith("llamacpp:tokens_predicted_total"):
            return float(line.split()[-1])
    raise AssertionError(f"no token counter in /metrics: {text[:300]}")


async def test_a_cancelled_call_stops_generating_and_frees_its_slot(model):
    count = [{"role": "user", "content": "Count from 1 to 1000, one number per line, no other text."}]
    limit = 400
    await model.start()
    before = _tokens_predicted(_engine(model))
    task = asyncio.create_task(model.complete(count, max_tokens=limit, temperature=0.0))
    for _ in range(1200):  # wait (generously) until the engine is working on it
        await asyncio.sleep(0.5)
        if model.engines and any(s["is_processing"] for s in _slots(model)):
            break
    else:
        pytest.fail("the engine never started the request")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(300):  # poll gently: a stream of /slots requests delays the engine's own bookkeeping
        if not any(s["is_processing"] for s in _slots(model)):
            break
        await asyncio.sleep(2.0)
    else:
        pytest.fail("the cancelled request kept its slot")
    assert _tokens_predicted(_engine(model)) - before < limit, (
        "generation went on after the call was cancelled"
    )


async def test_pool_shares_one_engine_and_aclose_stops_it():
    _require_small_model()
    pool = ModelPool()
    spec = f"local:{SMALL}?slots=2&ctx=512"
    a, b = pool.get(spec), pool.get(spec)
    assert a is b
    ra, rb = await asyncio.gather(
        a.complete(ASK, max_tokens=4, temperature=0.0), b.complete(ASK, max_tokens=4, temperature=0.0)
    )
    assert ra.completions[0].text and rb.completions[0].text
    assert isinstance(a, LocalModel) and a.started
    urls = [e.base_url for e in a.engines]
    assert len(urls) == available_cores(), "by default one single-threaded engine per core"
    await pool.aclose()
    assert not a.started and not a.engines
    for url in urls:
        with pytest.raises(httpx.TransportError):
            httpx.get(url + "/health", timeout=5, trust_env=False)


async def test_the_engine_applies_the_models_own_chat_template(model):
    await model.start()
    e = _engine(model)
    messages = [{"role": "system", "content": "SYS"}, {"role": "user", "content": "hello"}]
    prompt = httpx.post(
        e.base_url + "/apply-template",
        json={"messages": messages},
        headers=e.headers(),
        timeout=60,
        trust_env=False,
    ).json()["prompt"]
    assert (
        prompt
        == "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"
    )


async def test_the_engine_refuses_requests_without_its_key(model):
    await model.start()
    e = _engine(model)
    assert e.api_key
    body = {"messages": ASK, "max_tokens": 1}
    url = e.base_url + "/v1/chat/completions"
    assert httpx.post(url, json=body, timeout=60, trust_env=False).status_code == 401
    assert httpx.get(e.base_url + "/health", timeout=60, trust_env=False).status_code == 200


async def test_replicas_share_the_calls_and_all_of_them_stop():
    _require_small_model()
    m = LocalModel(SMALL, config=EngineConfig(replicas=2, slots=1, ctx=512))
    try:
        calls = [m.complete(ASK, temperature=0.8, max_tokens=8, seed=i) for i in range(4)]
        results = await asyncio.gather(*calls)
        assert all(r.completions[0].text for r in results)
        a, b = m.engines
        assert a.base_url != b.base_url
        made = [_tokens_predicted(e) for e in (a, b)]
        assert all(n > 0 for n in made), f"each engine decoded some of the calls: {made}"
        assert sum(made) == sum(r.usage.completion_tokens for r in results)
    finally:
        await m.aclose()
    assert not m.started and not m.engines
