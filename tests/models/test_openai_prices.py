"""The price table: built-in prices, $MEMDOOR_PRICES overrides, unpriced never free."""

from __future__ import annotations

import json

import pytest

from memdoor.core.errors import UsageError
from memdoor.core.messages import Usage
from memdoor.models.prices import PRICES_ENV, PriceTable, load_prices, price, price_of

MILLION = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)


def test_builtin_price_of_an_openai_model():
    table = PriceTable.load(env={})
    assert table.price("openai:gpt-4o-mini", MILLION) == pytest.approx(0.15 + 0.60)
    assert table.price("openai:gpt-4o-mini@https://api.openai.com/v1", MILLION) == pytest.approx(0.75)
    usage = Usage(prompt_tokens=2000, completion_tokens=500)
    assert table.price("openai:gpt-4.1", usage) == pytest.approx((2000 * 2.00 + 500 * 8.00) / 1e6)


@pytest.mark.parametrize(
    "spec",
    [
        "openai:Qwen/Qwen2.5-Coder-32B-Instruct@http://gpu-box:8000/v1",  # unknown model
        "openai:gpt-4o@http://127.0.0.1:8080/v1",  # a local server's alias is not OpenAI's bill
        "local:qwen2.5-coder-0.5b",  # embedded: unpriced unless the user says
        "scripted",
        "openai:gpt-4o-2024-05-13",  # dated snapshots may differ: not guessed
    ],
)
def test_unknown_is_unpriced_not_free(spec):
    assert PriceTable.load(env={}).price(spec, MILLION) is None


def test_zero_usage_of_a_priced_model_costs_zero():
    assert PriceTable.load(env={}).price("openai:gpt-4o", Usage()) == 0.0


def test_user_prices_from_json_text_override_and_add():
    env = {
        PRICES_ENV: json.dumps(
            {
                "gpt-4o-mini": {"input": 1, "output": 2},
                "local:qwen2.5-coder-0.5b": [0, 0],
                "openai:Qwen/Qwen2.5-Coder-32B-Instruct@http://gpu-box:8000/v1": [0.2, 0.4],
            }
        )
    }
    table = PriceTable.load(env=env)
    assert table.price("openai:gpt-4o-mini", MILLION) == pytest.approx(3.0)
    assert table.price("local:qwen2.5-coder-0.5b", MILLION) == 0.0  # the user said free
    assert table.price(
        "openai:Qwen/Qwen2.5-Coder-32B-Instruct@http://gpu-box:8000/v1", MILLION
    ) == pytest.approx(0.6)
    # the same model elsewhere is another bill
    assert table.price("openai:Qwen/Qwen2.5-Coder-32B-Instruct@http://other:8000/v1", MILLION) is None
    assert table.price("openai:gpt-4o", MILLION) == pytest.approx(12.5)  # built-in still there


def test_most_specific_key_wins(tmp_path):
    f = tmp_path / "prices.json"
    f.write_text(
        json.dumps(
            {
                "m": [1, 1],
                "openai:m": [2, 2],
                "openai:m@http://a:1/v1": [3, 3],
            }
        )
    )
    table = PriceTable.load(env={PRICES_ENV: str(f)})
    assert table.price("openai:m@http://a:1/v1", MILLION) == 6
    assert table.price("openai:m@http://b:1/v1", MILLION) == 4
    assert table.price("openai:m", MILLION) == 4
    assert table.price("local:m", MILLION) == 2


@pytest.mark.parametrize(
    "value",
    [
        "{not json",
        '{"m": [1]}',
        '{"m": {"input": 1}}',
        '{"m": {"input": -1, "output": 1}}',
        '{"m": ["1", 2]}',
        '{"m": [true, 2]}',
        "[1, 2]",
    ],
)
def test_bad_prices_are_a_usage_error(value, tmp_path):
    with pytest.raises(UsageError) as info:
        PriceTable.load(env={PRICES_ENV: value if value.startswith("{") else str(tmp_path / "p.json")})
    assert "\n" not in str(info.value)
    f = tmp_path / "bad.json"
    f.write_text(value)
    with pytest.raises(UsageError) as info:
        PriceTable.load(env={PRICES_ENV: str(f)})
    assert str(f) in str(info.value)


def test_missing_price_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError) as info:
        PriceTable.load(env={PRICES_ENV: str(tmp_path / "nope.json")})
    assert "nope.json" in str(info.value)


def test_module_functions_read_the_environment(monkeypatch):
    monkeypatch.setenv(PRICES_ENV, '{"local:qwen2.5-coder-0.5b": [1, 1]}')
    assert price("local:qwen2.5-coder-0.5b", MILLION) == 2
    assert price_of("local:qwen2.5-coder-0.5b", MILLION) == 2
    assert load_prices().price("local:qwen2.5-coder-0.5b", MILLION) == 2
    monkeypatch.delenv(PRICES_ENV)
    assert price("local:qwen2.5-coder-0.5b", MILLION) is None


def test_spec_settings_do_not_change_the_price():
    table = PriceTable.load(env={})
    assert table.price("openai:gpt-4o-mini?concurrency=4", MILLION) == pytest.approx(0.75)
    assert table.price(
        "openai:gpt-4o-mini@https://api.openai.com/v1?max_retries=2", MILLION
    ) == pytest.approx(0.75)
    user = PriceTable({"local:qwen2.5-coder-0.5b": [0.0, 0.0]})
    assert user.price("local:qwen2.5-coder-0.5b?slots=8", MILLION) == 0.0


def test_openai_key_only_goes_to_openai_or_its_configured_base_url():
    from memdoor.models.openai_model import api_key_from_env

    env = {"OPENAI_API_KEY": "sk-secret"}
    assert api_key_from_env("https://api.openai.com/v1", env) == "sk-secret"
    assert api_key_from_env("http://gpu-box:8000/v1", env) is None
    env_base = {**env, "OPENAI_BASE_URL": "http://gpu-box:8000/v1/"}
    assert api_key_from_env("http://gpu-box:8000/v1", env_base) == "sk-secret"
    assert api_key_from_env("http://elsewhere:8000/v1", {**env, "MEMDOOR_API_KEY": "mk"}) == "mk"
