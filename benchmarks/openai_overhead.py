"""Memdoor's own overhead per model call (``openai`` backend) against a bare HTTP request to the same server.

    .venv/bin/python benchmarks/openai_overhead.py [--engine local|fake] [--pairs N] [--max-tokens K]

Takes well under a minute on an idle 2-core machine (the local engine loads in a few seconds).

``--engine local`` (default when the 0.5B weights are assembled) serves the embedded model with the
real engine (xllamacpp: llama.cpp's OpenAI-compatible server, in this process, on loopback).
``--engine fake`` runs the deterministic test server (``tests/models/fakeserver.py``) in a separate
process. Each round sends the same chat request three ways, in random order: a bare ``httpx`` POST
whose JSON is decoded; the official ``AsyncOpenAI`` client alone; and ``OpenAIModel.complete`` (slot,
retry wrapper, the ``openai`` client, parsing into a ModelResponse). The overhead is Memdoor's time
minus the bare request's within a round: median and p95 of wall time and, since wall times on a shared
machine swing with its load, of the calling thread's CPU time (``thread_time``: the client's own work,
excluding the server's and the engine's threads), split into the ``openai`` package's part and
Memdoor's own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai

from memdoor.models.openai_model import OpenAIConfig, OpenAIModel

REPO = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_fake() -> tuple[str, subprocess.Popen]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "models" / "fakeserver.py")], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc.stdout.readline().strip(), proc


def start_local(name: str):
    from memdoor.models.catalog import get_entry
    from memdoor.models.engine import Engine, EngineConfig
    from memdoor.models.weights import WeightsStore

    path = WeightsStore().ensure(get_entry(name))
    engine = Engine(path, EngineConfig(slots=2))
    return engine.start().rstrip("/") + "/v1", engine


async def measure(base_url: str, model_name: str, pairs: int, warmup: int, max_tokens: int) -> dict:
    body = {
        "model": model_name,
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "seed": 0,
        "logprobs": True,
    }
    bare = httpx.AsyncClient(base_url=base_url, timeout=120, trust_env=False)
    raw = openai.AsyncOpenAI(
        base_url=base_url,
        api_key="EMPTY",
        max_retries=0,
        timeout=120,
        http_client=openai.DefaultAsyncHttpxClient(trust_env=False),
    )
    model = OpenAIModel(model_name, base_url, config=OpenAIConfig(request_timeout_s=120))

    async def bare_call() -> None:
        r = await bare.post("/chat/completions", json=body, headers={"Authorization": "Bearer EMPTY"})
        r.raise_for_status()
        assert r.json()["choices"]

    async def openai_call() -> None:
        assert (await raw.chat.completions.create(**body)).choices

    async def memdoor_call() -> None:
        resp = await model.complete(MESSAGES, temperature=0.0, max_tokens=max_tokens, logprobs=True, seed=0)
        assert resp.completions

    calls = {"bare": bare_call, "openai": openai_call, "memdoor": memdoor_call}

    async def timed(name: str) -> tuple[float, float]:
        t, c = time.perf_counter(), time.thread_time()
        await calls[name]()
        return time.perf_counter() - t, time.thread_time() - c

    rng = random.Random(0)
    wall: dict[str, list[float]] = {k: [] for k in calls}
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    try:
        for _ in range(warmup):
            for name in calls:
                await timed(name)
        for _ in range(pairs):
            order = list(calls)
            rng.shuffle(order)
            for name in order:
                w, c = await timed(name)
                wall[name].append(w)
                cpu[name].append(c)
    finally:
        await bare.aclose()
        await raw.close()
        await model.aclose()

    def ms(x: float) -> float:
        return round(x * 1000.0, 3)

    def diff(d: dict[str, list[float]], a: str, b: str) -> list[float]:
        return [x - y for x, y in zip(d[a], d[b], strict=True)]

    total_wall, total_cpu = diff(wall, "memdoor", "bare"), diff(cpu, "memdoor", "bare")
    own_cpu = diff(cpu, "memdoor", "openai")
    return {
        "rounds": pairs,
        "overhead_median_ms": ms(statistics.median(total_wall)),
        "overhead_p95_ms": ms(quantile(total_wall, 0.95)),
        "client_cpu_overhead_median_ms": ms(statistics.median(total_cpu)),
        "client_cpu_overhead_p95_ms": ms(quantile(total_cpu, 0.95)),
        "of_which_openai_package_cpu_median_ms": ms(statistics.median(diff(cpu, "openai", "bare"))),
        "of_which_memdoor_own_cpu_median_ms": ms(statistics.median(own_cpu)),
        "median_wall_ms": {k: ms(statistics.median(v)) for k, v in wall.items()},
        "median_client_cpu_ms": {k: ms(statistics.median(v)) for k, v in cpu.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--engine", choices=["local", "fake"], default=None, help="default: local if available"
    )
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="catalog model for --engine local")
    parser.add_argument("--pairs", type=int, default=None, help="rounds; default: 300 (fake), 100 (local)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=1, help="tokens to generate per request")
    args = parser.parse_args()

    engine = args.engine
    if engine is None:
        try:
            import xllamacpp  # noqa: F401

            from memdoor.models.catalog import get_entry
            from memdoor.models.weights import WeightsStore

            engine = "local" if WeightsStore().ensure(get_entry(args.model)) else "fake"
        except Exception:
            engine = "fake"

    pairs = args.pairs or (100 if engine == "local" else 300)
    handle = None
    if engine == "local":
        base_url, handle = start_local(args.model)
        model_name = args.model
    else:
        base_url, handle = start_fake()
        model_name = "fake-model"
    try:
        result = asyncio.run(measure(base_url, model_name, pairs, args.warmup, args.max_tokens))
    finally:
        if engine == "local":
            handle.stop()
        else:
            handle.terminate()
            handle.wait(10)
    result = {
        "engine": engine if engine == "fake" else f"local:{args.model} (xllamacpp, in-process)",
        "max_tokens": args.max_tokens,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        **result,
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
