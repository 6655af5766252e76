"""Model specs → model instances, one instance per distinct spec (agents with the same spec share it).

A spec is ``BACKEND:REST``: ``local:qwen2.5-coder-0.5b``, ``openai:MODEL@http://host:8000/v1``,
``scripted:answers.json``. Each backend class parses its own REST in ``from_spec(rest)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from memdoor.core.errors import ModelSpecError, UsageError
from memdoor.core.net import redact_spec
from memdoor.core.protocols import Model
from memdoor.core.registry import REGISTRY, load


def split_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt@url"`` → ``("openai", "gpt@url")``; a ModelSpecError naming the backends otherwise."""
    backend, sep, rest = spec.partition(":")
    if not sep or not rest or backend not in REGISTRY["model"]:
        raise ModelSpecError(
            f"bad model spec {redact_spec(spec)!r}: expected BACKEND:NAME with BACKEND one of {', '.join(sorted(REGISTRY['model']))}"
            " (e.g. local:qwen2.5-coder-0.5b, openai:MODEL@http://host:8000/v1)"
        )
    return backend, rest


class EndpointLimits:
    """Concurrency slots per endpoint (e.g. an OpenAI-compatible base URL), shared by every model of one pool.

    Two specs naming different models on the same server share one limit, because the server's
    capacity is what the limit protects. The first model to ask for an endpoint sets its limit.
    """

    def __init__(self) -> None:
        self._slots: dict[str, asyncio.Semaphore] = {}

    def slots(self, endpoint: str, limit: int) -> asyncio.Semaphore:
        """The semaphore of ``endpoint``, created with ``limit`` slots on first use."""
        if endpoint not in self._slots:
            self._slots[endpoint] = asyncio.Semaphore(limit)
        return self._slots[endpoint]


class ModelPool:
    """Opens each spec once and closes them all. Not global: one pool per run, passed along.

    ``configs`` maps a backend name (``openai``) to that backend's config object, used for the models
    the pool opens from specs. A backend class that defines ``from_spec_in_pool(rest, pool)`` is built
    with it (so it can share :attr:`limits` and read :meth:`config_for`); others with ``from_spec(rest)``.
    """

    def __init__(self, configs: Mapping[str, Any] | None = None) -> None:
        self._models: dict[str, Model] = {}
        self._configs = dict(configs or {})
        self.limits = EndpointLimits()

    def config_for(self, backend: str) -> Any | None:
        """The config given for ``backend``, or None (the backend's defaults)."""
        return self._configs.get(backend)

    def add(self, spec: str, model: Model) -> None:
        """Register an already-built model under ``spec`` (tests, scripted teams)."""
        self._models[spec] = model

    def get(self, spec: str) -> Model:
        if spec not in self._models:
            backend, rest = split_spec(spec)
            try:
                cls = load("model", backend)
            except UsageError as e:
                raise ModelSpecError(str(e)) from None
            in_pool = getattr(cls, "from_spec_in_pool", None)
            self._models[spec] = in_pool(rest, self) if in_pool is not None else cls.from_spec(rest)
        return self._models[spec]

    async def aclose(self) -> None:
        models, self._models = list(self._models.values()), {}
        for m in models:
            await m.aclose()
