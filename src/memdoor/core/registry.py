"""Short names → implementation classes, imported lazily (importing memdoor loads no backend)."""

from __future__ import annotations

import importlib
from typing import Any

from memdoor.core.errors import UsageError

REGISTRY: dict[str, dict[str, str]] = {
    "model": {
        "openai": "memdoor.models.openai_model:OpenAIModel",
        "local": "memdoor.models.local:LocalModel",
        "scripted": "memdoor.models.scripted:ScriptedModel",
    },
    "sandbox": {
        "bwrap": "memdoor.sandbox.isolation:BwrapSandbox",
        "unshare": "memdoor.sandbox.isolation:UnshareSandbox",
    },
    "memory": {
        "inproc": "memdoor.memory.inproc:InProcMemory",
        "redis": "memdoor.memory.redis_memory:RedisMemory",
    },
    "strategy": {
        "single": "memdoor.strategies.single:Single",
        "parallel": "memdoor.strategies.parallel:Parallel",
        "sequential": "memdoor.strategies.sequential:Sequential",
        "shared": "memdoor.strategies.shared:Shared",
        "hybrid": "memdoor.strategies.hybrid:Hybrid",
        "sstar": "memdoor.strategies.hybrid:SStar",
        "cascade": "memdoor.strategies.cascade:Cascade",
        "adaptive": "memdoor.strategies.adaptive:Adaptive",
    },
    "selector": {
        "vote": "memdoor.select.vote:VoteSelector",
    },
}


def names(kind: str) -> list[str]:
    return sorted(REGISTRY[kind])


def load(kind: str, name: str) -> Any:
    """The class registered as ``name`` for ``kind``; a UsageError naming the choices if there is none."""
    table = REGISTRY.get(kind)
    if table is None:
        raise UsageError(f"unknown component kind {kind!r}")
    target = table.get(name)
    if target is None:
        raise UsageError(f"unknown {kind} {name!r} (choose from: {', '.join(sorted(table))})")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
