"""The scripted model: deterministic replay for tests of control flow (never for results)."""

from __future__ import annotations

import json

import pytest

from memdoor.core.errors import ModelError, ModelSpecError, ModelTimeout
from memdoor.core.protocols import Model
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel

ASK = [{"role": "system", "content": "you code"}, {"role": "user", "content": "write add"}]


async def test_replays_in_order_and_cycles():
    m = ScriptedModel(["one", "two words"])
    assert isinstance(m, Model)
    texts = [(await m.complete(ASK)).completions[0].text for _ in range(5)]
    assert texts == ["one", "two words", "one", "two words", "one"]
    assert len(m.calls) == 5
    assert m.calls[0] == ASK


async def test_without_cycling_it_runs_out():
    m = ScriptedModel(["only"], cycle=False)
    await m.complete(ASK)
    with pytest.raises(ModelError):
        await m.complete(ASK)


async def test_n_completions_take_successive_answers():
    m = ScriptedModel(["a", "b", "c"])
    resp = await m.complete(ASK, n=2)
    assert [c.text for c in resp.completions] == ["a", "b"]
    assert (await m.complete(ASK)).completions[0].text == "c"


async def test_scripted_failures_are_raised():
    m = ScriptedModel(["ok", ModelTimeout("scripted timeout")])
    await m.complete(ASK)
    with pytest.raises(ModelTimeout):
        await m.complete(ASK)


async def test_respond_function_sees_the_messages():
    m = ScriptedModel(respond=lambda msgs: msgs[-1]["content"].upper())
    assert (await m.complete(ASK)).completions[0].text == "WRITE ADD"


async def test_usage_and_logprobs():
    m = ScriptedModel(["x = 1 + 2"], logprob=[-0.5, -1.0])
    plain = await m.complete(ASK)
    assert plain.completions[0].logprobs is None
    assert plain.usage.prompt_tokens == 4  # "you code" + "write add", in words
    assert plain.usage.completion_tokens == 5
    assert plain.model == "scripted"
    with_lp = await m.complete(ASK, logprobs=True)
    assert with_lp.completions[0].logprobs == [-1.0] * 5  # second call takes the second logprob
    assert with_lp.completions[0].mean_logprob == -1.0


def test_needs_answers():
    with pytest.raises(ModelSpecError):
        ScriptedModel([])


async def test_from_spec_through_the_pool(tmp_path):
    f = tmp_path / "answers.json"
    f.write_text(json.dumps(["print(3)"]))
    pool = ModelPool()
    try:
        m = pool.get(f"scripted:{f}")
        assert pool.get(f"scripted:{f}") is m
        assert m.spec == f"scripted:{f}"
        assert (await m.complete(ASK)).completions[0].text == "print(3)"
    finally:
        await pool.aclose()


@pytest.mark.parametrize("content", [None, "not json", "[]", '["ok", 3]', '{"a": 1}'])
def test_bad_answer_files(tmp_path, content):
    f = tmp_path / "answers.json"
    if content is not None:
        f.write_text(content)
    with pytest.raises(ModelSpecError) as info:
        ScriptedModel.from_spec(str(f))
    assert str(f) in str(info.value)
