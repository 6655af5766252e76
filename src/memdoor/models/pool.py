"""Model specs → model instances, one instance per distinct spec (agents with the same spec share it).

A spec is ``BACKEND:REST``: ``local:qwen2.5-coder-0.5b``, ``openai:MODEL@http://host:8000/v1``,
``scripted:answers.json``. Each backend class parses its own REST in ``from_spec(rest)``.
"""

from __future__ import annotations

from memdoor.errors import ModelSpecError, UsageError
from memdoor.protocols import Model
from memdoor.registry import REGISTRY, load


def split_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt@url"`` → ``("openai", "gpt@url")``; a ModelSpecError naming the backends otherwise."""
    backend, sep, rest = spec.partition(":")
    if not sep or not rest or backend not in REGISTRY["model"]:
        raise ModelSpecError(
            f"bad model spec {spec!r}: expected BACKEND:NAME with BACKEND one of {', '.join(sorted(REGISTRY['model']))}"
            " (e.g. local:qwen2.5-coder-0.5b, openai:MODEL@http://host:8000/v1)"
        )
    return backend, rest


class ModelPool:
    """Opens each spec once and closes them all. Not global: one pool per run, passed along."""

    def __init__(self) -> None:
        self._models: dict[str, Model] = {}

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
            self._models[spec] = cls.from_spec(rest)
        return self._models[spec]

    async def aclose(self) -> None:
        models, self._models = list(self._models.values()), {}
        for m in models:
            await m.aclose()
