"""A roofline for the embedded models on this machine: which limit binds decoding, memory or compute?

Measures, in one run:

1. the machine's memory read bandwidth (GB/s): numpy sums over a 512 MiB array, one process and one
   process per core at once (best of ``--repeats``);
2. per model and engine thread count, the engine's compute ceiling: prompt processing of one long
   prompt (a batched matrix product over many tokens: the most the kernels get out of the cores), in
   tokens/s;
3. decoding at 1, 2, 4 and 8 concurrent streams (greedy, fixed length), in total tokens/s.

A decoding step reads every weight once (whatever the number of streams), so memory allows at most
``bandwidth / model file size`` steps a second: one token per stream per step. Compute allows at most
the prompt-processing rate in tokens a second, shared by the streams. The report prints both ceilings
beside what decoding achieved and says which one binds, and which thread count decodes fastest.

Usage (an otherwise idle machine; the figures go to BENCHMARKS.md with this command):
  python benchmarks/roofline.py --json
  python benchmarks/roofline.py --models qwen2.5-coder-0.5b --threads 2 --streams 1,5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import statistics
import time

import httpx
import numpy as np

from memdoor.models.catalog import get_entry
from memdoor.models.engine import Engine, EngineConfig, available_cores
from memdoor.models.weights import WeightsStore

ARRAY_BYTES = 512 * 2**20
COUNT = [{"role": "user", "content": "Count from 1 to 1000, one number per line, no other text."}]
# A long prompt made of distinct lines (no prompt cache can shorten it: cache_prompt is off).
LONG = [
    {
        "role": "user",
        "content": "\n".join(f"line {i}: the value of x{i} is {i * 7919 % 1000}" for i in range(100)),
    }
]


def _read_bandwidth(seconds: float = 2.0) -> float:
    """GB/s one process reads: numpy sums over an array far larger than the caches."""
    a = np.ones(ARRAY_BYTES // 8)
    a.sum()  # fault the pages in
    best, deadline = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        t = time.perf_counter()
        a.sum()
        best = max(best, ARRAY_BYTES / (time.perf_counter() - t) / 1e9)
    return best


def _child(queue: multiprocessing.Queue) -> None:
    queue.put(_read_bandwidth())


def bandwidth(processes: int, repeats: int) -> float:
    """Total read GB/s of ``processes`` readers at once (best of ``repeats``)."""
    best = 0.0
    for _ in range(repeats):
        queue: multiprocessing.Queue = multiprocessing.Queue()
        procs = [multiprocessing.Process(target=_child, args=(queue,)) for _ in range(processes)]
        for p in procs:
            p.start()
        total = sum(queue.get() for _ in procs)
        for p in procs:
            p.join()
        best = max(best, total)
    return best


async def _post(client: httpx.AsyncClient, body: dict) -> dict:
    r = await client.post("/v1/chat/completions", json=body)
    r.raise_for_status()
    return r.json()


async def engine_figures(name: str, threads: int, streams: list[int], tokens: int, repeats: int) -> dict:
    path = WeightsStore().ensure(get_entry(name))
    engine = Engine(path, EngineConfig(slots=max(streams), threads=threads, ctx=4096))
    base = engine.start()
    try:
        async with httpx.AsyncClient(base_url=base, headers=engine.headers(), timeout=1800) as c:
            await _post(c, {"messages": COUNT, "max_tokens": 4, "temperature": 0.0})
            pp = []
            for _ in range(repeats):
                t = (await _post(c, {"messages": LONG, "max_tokens": 1, "cache_prompt": False}))["timings"]
                pp.append(t["prompt_n"] / (t["prompt_ms"] / 1000))
            decode: dict[int, float] = {}
            for n in streams:
                rates = []
                for _ in range(repeats):
                    body = {"messages": COUNT, "max_tokens": tokens, "temperature": 0.0, "ignore_eos": True}
                    started = time.perf_counter()
                    answers = await asyncio.gather(*(_post(c, {**body, "seed": k}) for k in range(n)))
                    wall = time.perf_counter() - started
                    made = sum(a["timings"]["predicted_n"] for a in answers)
                    prompt_s = max(a["timings"]["prompt_ms"] for a in answers) / 1000
                    rates.append(made / max(1e-9, wall - prompt_s))
                decode[n] = statistics.median(rates)
    finally:
        engine.stop()
    return {
        "model": name,
        "threads": threads,
        "bytes": path.stat().st_size,
        "prompt_tok_s": statistics.median(pp),
        "decode_tok_s": decode,
    }


def verdict(fig: dict, bw: float) -> dict:
    """Ceilings and which one binds, per stream count."""
    mem_steps = bw * 1e9 / fig["bytes"]  # decoding steps a second memory allows
    out = {}
    for n, rate in fig["decode_tok_s"].items():
        mem_ceiling = mem_steps * int(n)
        ceiling = min(mem_ceiling, fig["prompt_tok_s"])
        out[n] = {
            "achieved": rate,
            "memory_ceiling": mem_ceiling,
            "compute_ceiling": fig["prompt_tok_s"],
            "binds": "memory" if mem_ceiling < fig["prompt_tok_s"] else "compute",
            "of_ceiling": rate / ceiling,
            "bytes_per_s_gb": rate / int(n) * fig["bytes"] / 1e9,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    ap.add_argument("--threads", default=None, help="engine thread counts to try (default: 1 and all cores)")
    ap.add_argument("--streams", default="1,2,4,8")
    ap.add_argument("--tokens", type=int, default=96, help="tokens decoded per stream")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cores = available_cores()
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, cores})
    streams = [int(s) for s in args.streams.split(",")]
    bw = {p: bandwidth(p, args.repeats) for p in sorted({1, cores})}
    results = []
    for name in args.models.split(","):
        for t in threads:
            fig = asyncio.run(engine_figures(name, t, streams, args.tokens, args.repeats))
            fig["roofline"] = verdict(fig, bw[max(bw)])
            results.append(fig)
    doc = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": cores,
            "load_after": os.getloadavg(),
        },
        "bandwidth_gb_s": bw,
        "engines": results,
    }
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print("memory read bandwidth: " + ", ".join(f"{p} process(es) {v:.1f} GB/s" for p, v in bw.items()))
    for fig in results:
        print(
            f"\n{fig['model']} ({fig['bytes'] / 1e6:.0f} MB), {fig['threads']} thread(s): prompt processing {fig['prompt_tok_s']:.0f} tok/s"
        )
        for n, v in fig["roofline"].items():
            print(
                f"  {n} stream(s): {v['achieved']:.1f} tok/s; ceilings memory {v['memory_ceiling']:.0f}, compute"
                f" {v['compute_ceiling']:.0f} -> {v['binds']} binds; {100 * v['of_ceiling']:.0f}% of it"
            )


if __name__ == "__main__":
    main()
