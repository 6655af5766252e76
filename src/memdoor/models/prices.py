"""Dollars per call from a small per-model price table. Unknown models are *unpriced* (None), never free.

Built-in prices cover a few OpenAI models and apply only to ``openai:MODEL`` specs that name no URL
or name ``api.openai.com`` (a local server that calls its model ``gpt-4o`` is not OpenAI's bill).

Your own prices go in ``$MEMDOOR_PRICES``: either JSON text or the path of a JSON file, mapping a key
to dollars per million input and output tokens::

    {"gpt-4o-mini": {"input": 0.15, "output": 0.60},
     "openai:Qwen/Qwen2.5-Coder-32B-Instruct@http://gpu-box:8000/v1": [0.20, 0.20],
     "local:qwen2.5-coder-0.5b": [0, 0]}

A key is a full spec, a spec without its ``@URL`` (``openai:gpt-4o-mini``), or a bare model name; the
most specific match wins, and your prices override the built-in ones. Settings after ``?`` in a spec
(``local:NAME?slots=8``) are ignored for pricing. Use it in a run with
``RunContext(price=load_prices().price)`` (loads once) or ``RunContext(price=price)`` (reads the
environment on every call).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from memdoor.core.errors import UsageError
from memdoor.core.messages import Usage
from memdoor.core.net import split_model_url, split_options

PRICES_ENV = "MEMDOOR_PRICES"


class ModelPrice(BaseModel):
    """What a model costs."""

    input: float = Field(ge=0, description="Dollars per million prompt (input) tokens.")
    output: float = Field(ge=0, description="Dollars per million completion (output) tokens.")

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.input + usage.completion_tokens * self.output) / 1e6


# OpenAI standard-tier list prices in $ per 1M tokens (input, output), as published on OpenAI's pricing
# page and reported for March 2026 (not re-checked against the live page: this machine is offline).
# Prices change: override them with $MEMDOOR_PRICES.
BUILTIN_PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        name: ModelPrice(input=i, output=o)
        for name, (i, o) in {
            "gpt-4o": (2.50, 10.00),
            "gpt-4o-mini": (0.15, 0.60),
            "gpt-4.1": (2.00, 8.00),
            "gpt-4.1-mini": (0.40, 1.60),
            "gpt-4.1-nano": (0.10, 0.40),
            "o3-mini": (1.10, 4.40),
            "o4-mini": (1.10, 4.40),
            "gpt-5": (1.25, 10.00),
            "gpt-5-mini": (0.25, 2.00),
            "gpt-5-nano": (0.05, 0.40),
        }.items()
    }
)
OPENAI_HOSTS = frozenset({"api.openai.com"})


def _spec_keys(spec: str) -> tuple[str, str, str, str | None]:
    """``openai:m@url?settings`` → (``openai:m@url``, ``openai:m``, ``m``, url or None).

    Settings after ``?`` (concurrency, timeouts...) do not change the bill, so they are ignored.
    """
    spec, _ = split_options(spec)
    backend, _, rest = spec.partition(":")
    model, url = split_model_url(rest) if backend == "openai" else (rest, None)
    return spec, f"{backend}:{model}", model, url


class PriceTable:
    """User prices over built-in ones. Immutable once made."""

    def __init__(
        self,
        user: Mapping[str, ModelPrice | Mapping[str, float] | Sequence[float]] | None = None,
        *,
        builtin: bool = True,
    ):
        """``user`` maps keys (see the module doc) to prices: ModelPrice, ``{"input", "output"}`` or a pair."""
        self._user = {k: _as_price(v) for k, v in (user or {}).items()}
        self._builtin = BUILTIN_PRICES if builtin else {}

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None) -> PriceTable:
        """Built-in prices plus those of ``$MEMDOOR_PRICES`` (JSON text or a JSON file path)."""
        env = os.environ if env is None else env
        value = (env.get(PRICES_ENV) or "").strip()
        if not value:
            return cls()
        if value.startswith("{"):
            return cls(parse_prices(value, f"${PRICES_ENV}"))
        try:
            text = Path(value).read_text()
        except OSError as e:
            raise UsageError(f"${PRICES_ENV}: cannot read price file {value!r}: {e.strerror or e}") from None
        return cls(parse_prices(text, value))

    def lookup(self, spec: str) -> ModelPrice | None:
        """The price of a model spec, or None when it is unpriced."""
        full, short, model, url = _spec_keys(spec)
        for key in (full, short, model):
            if key in self._user:
                return self._user[key]
        if full.startswith("openai:") and model in self._builtin:
            host = urlsplit(url).hostname if url else None
            if url is None or host in OPENAI_HOSTS:
                return self._builtin[model]
        return None

    def price(self, spec: str, usage: Usage) -> float | None:
        """Dollars for ``usage`` of ``spec``; None when unpriced. Fits ``RunContext.price``."""
        p = self.lookup(spec)
        return None if p is None else p.cost(usage)


def _as_price(value: ModelPrice | Mapping[str, float] | Sequence[float]) -> ModelPrice:
    if isinstance(value, list | tuple) and len(value) == 2:
        return ModelPrice(input=value[0], output=value[1])
    return ModelPrice.model_validate(value)


def parse_prices(text: str, source: str) -> dict[str, ModelPrice]:
    """Parse the JSON price map described in this module's doc; a one-line UsageError naming the bad entry."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{source}: prices are not valid JSON: {e}") from None
    except RecursionError:
        raise UsageError(f"{source}: prices are not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise UsageError(f"{source}: prices must be a JSON object mapping model to prices")
    prices: dict[str, ModelPrice] = {}
    for key, value in data.items():
        if isinstance(value, list) and len(value) == 2:
            value = {"input": value[0], "output": value[1]}
        if not isinstance(value, dict) or set(value) != {"input", "output"}:
            raise UsageError(
                f'{source}: price of {key!r} must be {{"input": $, "output": $}} or [input, output]'
                " in dollars per million tokens"
            )
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < float("inf")
            for v in value.values()
        ):
            raise UsageError(f"{source}: price of {key!r} must be finite non-negative numbers")
        prices[key] = ModelPrice(input=float(value["input"]), output=float(value["output"]))
    return prices


def load_prices(env: Mapping[str, str] | None = None) -> PriceTable:
    """The price table of this environment (built-in + ``$MEMDOOR_PRICES``)."""
    return PriceTable.load(env)


def price(model_spec: str, usage: Usage) -> float | None:
    """Dollars for one call, None when the model is unpriced. Reads ``$MEMDOOR_PRICES`` on each call."""
    return PriceTable.load().price(model_spec, usage)


price_of = price
"""Alias of :func:`price` (the name :mod:`memdoor.run.solve` looks up)."""
