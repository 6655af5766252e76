"""Throughput, per-call overhead and memory of the embedded ``local`` models.

Measures, through Memdoor's own ``LocalModel`` (what agents use):

1. tokens/s of each model for 1 stream and for 5 concurrent streams (aggregate), on one engine;
2. Memdoor's overhead per call against a bare HTTP request with the same body to the same engine
   (1-token completions, the two kinds interleaved; median and p95 of both and of the paired difference);
3. peak RSS of a process whose 5-agent team shares one model (through ``ModelPool``), against a
   process with one agent, and (``--unshared``) against 5 separately loaded engines;
4. one stream with idle engine threads sleeping (``wait_policy=passive``, the default) against the
   OpenMP runtime's default wait, each in a fresh process (the policy is read once, at load).

Usage:
  python benchmarks/local_throughput.py                       # both models, short runs
  python benchmarks/local_throughput.py --models qwen2.5-coder-0.5b --tokens 64 --repeats 1

Keep runs short on a shared 2-core machine; the figures go to BENCHMARKS.md with the command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from memdoor.models.engine import EngineConfig, available_cores
from memdoor.models.local import LocalModel

COUNT = [{"role": "user", "content": "Count from 1 to 1000, one number per line, no other text."}]
HELLO = [{"role": "user", "content": "Say hello."}]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


async def throughput(model: LocalModel, tokens: int, streams: int) -> dict:
    started = time.perf_counter()
    results = await asyncio.gather(
        *(model.complete(COUNT, max_tokens=tokens, temperature=0.0, seed=i) for i in range(streams))
    )
    wall = time.perf_counter() - started
    generated = sum(r.usage.completion_tokens for r in results)
    return {"streams": streams, "tokens": generated, "seconds": wall, "tok_per_s": generated / wall}


async def bench_throughput(name: str, tokens: int, repeats: int) -> dict:
    model = LocalModel(name, config=EngineConfig(slots=5, replicas=1, threads=2))  # one batching engine
    try:
        await model.complete(HELLO, max_tokens=4, temperature=0.0)  # load + warm up
        runs: dict[int, list[dict]] = {1: [], 5: []}
        for _ in range(repeats):
            for streams in (1, 5):
                runs[streams].append(await throughput(model, tokens, streams))
        one = statistics.median(r["tok_per_s"] for r in runs[1])
        five = statistics.median(r["tok_per_s"] for r in runs[5])
        return {"model": name, "tok_s_1": one, "tok_s_5": five, "speedup": five / one, "runs": runs}
    finally:
        await model.aclose()


async def bench_overhead(name: str, calls: int) -> dict:
    model = LocalModel(name, config=EngineConfig(slots=5, replicas=1))
    try:
        await model.start()
        [engine] = model.engines  # the same engine, reached directly
        base_url = engine.base_url
        body = {"messages": HELLO, "temperature": 0.0, "max_tokens": 1, "cache_prompt": True}
        memdoor_s: list[float] = []
        bare_s: list[float] = []
        # CPU seconds of the calling thread (the event loop) per call: what the client side costs,
        # unaffected by how long the engine takes on a busy machine.
        memdoor_cpu: list[float] = []
        bare_cpu: list[float] = []
        headers = engine.headers()
        async with httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=600, trust_env=False
        ) as bare:
            for _ in range(3):  # warm both paths (prompt cache, connections)
                await model.complete(HELLO, max_tokens=1, temperature=0.0)
                (await bare.post("/v1/chat/completions", json=body)).json()
            for _ in range(calls):
                t, c = time.perf_counter(), time.thread_time()
                await model.complete(HELLO, max_tokens=1, temperature=0.0)
                memdoor_s.append(time.perf_counter() - t)
                memdoor_cpu.append(time.thread_time() - c)
                t, c = time.perf_counter(), time.thread_time()
                (await bare.post("/v1/chat/completions", json=body)).json()
                bare_s.append(time.perf_counter() - t)
                bare_cpu.append(time.thread_time() - c)
        diffs = [m - b for m, b in zip(memdoor_s, bare_s, strict=True)]
        ms = 1000.0
        return {
            "model": name,
            "calls": calls,
            "bare_median_ms": statistics.median(bare_s) * ms,
            "bare_p95_ms": pct(bare_s, 0.95) * ms,
            "memdoor_median_ms": statistics.median(memdoor_s) * ms,
            "memdoor_p95_ms": pct(memdoor_s, 0.95) * ms,
            "overhead_median_ms": (statistics.median(memdoor_s) - statistics.median(bare_s)) * ms,
            "paired_diff_median_ms": statistics.median(diffs) * ms,
            "paired_diff_p95_ms": pct(diffs, 0.95) * ms,
            "bare_cpu_median_ms": statistics.median(bare_cpu) * ms,
            "bare_cpu_p95_ms": pct(bare_cpu, 0.95) * ms,
            "memdoor_cpu_median_ms": statistics.median(memdoor_cpu) * ms,
            "memdoor_cpu_p95_ms": pct(memdoor_cpu, 0.95) * ms,
        }
    finally:
        await model.aclose()


MEMORY_CHILD = """
import asyncio, json, sys
from memdoor.models.local import LocalModel
from memdoor.models.pool import ModelPool
from memdoor.agents.team import team_configs

def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024

async def main(name, agents, shared):
    spec = f"local:{name}?slots=5"
    configs = team_configs([spec], agents)
    if shared:
        pool = ModelPool()
        models = [pool.get(c.model) for c in configs]  # one instance per spec: agents share it
    else:
        models = [LocalModel.from_spec(c.model.split(":", 1)[1]) for c in configs]
    ask = [{"role": "user", "content": "Write a Python function add(a, b)."}]
    await asyncio.gather(*(m.complete(ask, max_tokens=16, seed=i) for i, m in enumerate(models)))
    engines = len({id(m) for m in models})
    print(json.dumps({"agents": agents, "shared": shared, "engines": engines, "peak_rss_mb": peak_mb()}))
    for m in {id(m): m for m in models}.values():
        await m.aclose()

asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "shared"))
"""


WAIT_CHILD = """
import asyncio, json, sys, time
from memdoor.models.engine import EngineConfig
from memdoor.models.local import LocalModel

COUNT = [{"role": "user", "content": "Count from 1 to 1000, one number per line, no other text."}]

async def main(name, policy, tokens):
    model = LocalModel(name, config=EngineConfig(slots=5, ctx=1024, wait_policy=policy))
    try:
        await model.complete(COUNT, max_tokens=2, temperature=0.0)
        t = time.perf_counter()
        r = await model.complete(COUNT, max_tokens=tokens, temperature=0.0)
        print(json.dumps({"policy": policy, "tok_per_s": r.usage.completion_tokens / (time.perf_counter() - t)}))
    finally:
        await model.aclose()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def bench_wait_policy(name: str, tokens: int, repeats: int) -> dict:
    """One stream with idle threads sleeping vs the OpenMP default, alternating, each in a fresh process."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    runs: dict[str, list[float]] = {"passive": [], "default": []}
    for _ in range(repeats):
        for policy in runs:
            proc = subprocess.run(
                [sys.executable, "-c", WAIT_CHILD, name, policy, str(tokens)],
                capture_output=True,
                text=True,
                timeout=1800,
                env=env,
            )
            if proc.returncode != 0:
                raise SystemExit(f"wait-policy child failed: {proc.stderr[-2000:]}")
            runs[policy].append(json.loads(proc.stdout.strip().splitlines()[-1])["tok_per_s"])
    return {"model": name, "tokens": tokens, "runs": runs, "load_after": os.getloadavg()}


def bench_memory(name: str, unshared: bool) -> list[dict]:
    cases = [(1, "shared"), (5, "shared")] + ([(5, "unshared")] if unshared else [])
    out = []
    for agents, mode in cases:
        proc = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, name, str(agents), mode],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if proc.returncode != 0:
            raise SystemExit(f"memory child failed: {proc.stderr[-2000:]}")
        out.append({"model": name, **json.loads(proc.stdout.strip().splitlines()[-1])})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    parser.add_argument("--tokens", type=int, default=96, help="tokens generated per stream")
    parser.add_argument("--repeats", type=int, default=2, help="throughput repeats (median reported)")
    parser.add_argument("--overhead-calls", type=int, default=30, help="calls of each kind for the overhead")
    parser.add_argument("--overhead-model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--memory-model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--unshared", action="store_true", help="also measure 5 separately loaded engines")
    parser.add_argument(
        "--skip", default="", help="comma list of parts to skip: throughput,overhead,memory,waitpolicy"
    )
    parser.add_argument("--json", type=Path, help="also write all figures to this JSON file")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    report: dict = {
        "machine": {"cores": available_cores(), "cpu": platform.processor() or platform.machine()},
        "command": " ".join(sys.argv),
    }

    if "throughput" not in skip:
        report["throughput"] = []
        print("| model | 1 stream tok/s | 5 streams tok/s (total) | speedup | tokens/stream |")
        print("|---|---|---|---|---|")
        for name in filter(None, args.models.split(",")):
            r = asyncio.run(bench_throughput(name, args.tokens, args.repeats))
            report["throughput"].append(r)
            print(
                f"| {name} | {r['tok_s_1']:.1f} | {r['tok_s_5']:.1f} | {r['speedup']:.2f}x | {args.tokens} |"
            )
    if "overhead" not in skip:
        o = asyncio.run(bench_overhead(args.overhead_model, args.overhead_calls))
        report["overhead"] = o
        print()
        print("| per call (1-token completion) | median ms | p95 ms |")
        print("|---|---|---|")
        print(f"| bare HTTP request | {o['bare_median_ms']:.2f} | {o['bare_p95_ms']:.2f} |")
        print(f"| Memdoor LocalModel.complete | {o['memdoor_median_ms']:.2f} | {o['memdoor_p95_ms']:.2f} |")
        print(f"| paired difference | {o['paired_diff_median_ms']:.2f} | {o['paired_diff_p95_ms']:.2f} |")
        print(
            f"| client CPU, bare HTTP request | {o['bare_cpu_median_ms']:.2f} | {o['bare_cpu_p95_ms']:.2f} |"
        )
        print(
            f"| client CPU, Memdoor LocalModel.complete | {o['memdoor_cpu_median_ms']:.2f}"
            f" | {o['memdoor_cpu_p95_ms']:.2f} |"
        )
    if "memory" not in skip:
        m = bench_memory(args.memory_model, args.unshared)
        report["memory"] = m
        print()
        print("| process | engines loaded | peak RSS MB |")
        print("|---|---|---|")
        for row in m:
            who = f"{row['agents']} agent(s), {'one shared model' if row['shared'] else 'one model each'}"
            print(f"| {who} | {row['engines']} | {row['peak_rss_mb']:.0f} |")
    if "waitpolicy" not in skip:
        w = bench_wait_policy(args.memory_model, args.tokens, args.repeats)
        report["wait_policy"] = w
        print()
        print("| engine threads when idle (1 stream) | tok/s per run |")
        print("|---|---|")
        for policy, values in w["runs"].items():
            print(f"| {policy} | {', '.join(f'{v:.1f}' for v in values)} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
