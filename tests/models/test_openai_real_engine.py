"""The ``openai`` backend against a real OpenAI-compatible server: llama.cpp's, embedded (xllamacpp, 0.5B).

Slow tier: loads the real model once for the module and makes a few short calls.
"""

from __future__ import annotations

import pytest

from memdoor.core.errors import MemdoorError, ModelError
from memdoor.models.openai_model import OpenAIConfig, OpenAIModel

pytestmark = pytest.mark.slow

MODEL = "qwen2.5-coder-0.5b"
ASK = [{"role": "user", "content": "Write a Python function add(a, b) that returns a + b."}]


@pytest.fixture(scope="module")
def engine_url():
    pytest.importorskip("xllamacpp")
    from memdoor.models.catalog import get_entry
    from memdoor.models.engine import Engine, EngineConfig
    from memdoor.models.weights import WeightsStore

    try:
        path = WeightsStore(progress=False).ensure(get_entry(MODEL))
    except MemdoorError as e:
        pytest.skip(f"embedded model unavailable: {e}")
    engine = Engine(path, EngineConfig(slots=2, ctx=1024))
    base = engine.start()
    try:
        yield base.rstrip("/") + "/v1"
    finally:
        engine.stop()


async def test_real_server_completions_logprobs_and_usage(engine_url):
    model = OpenAIModel(MODEL, engine_url, config=OpenAIConfig(request_timeout_s=600))
    try:
        resp = await model.complete(ASK, n=2, max_tokens=12, temperature=0.8, logprobs=True, seed=3)
    finally:
        await model.aclose()
    assert len(resp.completions) == 2
    for c in resp.completions:
        assert c.text.strip()
        assert c.finish_reason in ("stop", "length")
        assert c.logprobs, "llama.cpp's server gives token logprobs when asked"
        assert all(lp <= 0 for lp in c.logprobs)
        assert len(c.logprobs) <= 12
    assert resp.usage.prompt_tokens > 10
    # llama.cpp's server counts the tokens of one choice only; each choice's logprobs count its own
    assert resp.usage.completion_tokens == sum(len(c.logprobs) for c in resp.completions)
    assert resp.usage.retries == 0


async def test_real_server_refuses_n_above_its_slots_so_auto_fans_out(engine_url):
    model = OpenAIModel(MODEL, engine_url, config=OpenAIConfig(request_timeout_s=600))
    try:
        resp = await model.complete(ASK, n=3, max_tokens=8, temperature=0.7, seed=1, stop=["def"])
    finally:
        await model.aclose()
    assert len(resp.completions) == 3  # the engine has 2 slots: a 400, then one request per completion
    assert resp.usage.retries == 1
    assert all("def" not in c.text for c in resp.completions)
    assert all(c.logprobs is None for c in resp.completions)  # not asked
    assert 0 < resp.usage.completion_tokens <= 24


async def test_real_server_unknown_route_is_a_clear_model_error(engine_url):
    model = OpenAIModel(MODEL, engine_url.removesuffix("/v1") + "/nope", config=OpenAIConfig(max_retries=0))
    try:
        with pytest.raises(ModelError) as info:
            await model.complete(ASK, max_tokens=4)
    finally:
        await model.aclose()
    assert "\n" not in str(info.value)
