"""Where a team's draft round goes: prompt processing or decoding, and how much of the prompt is reused.

For the first ``--problems`` HumanEval problems, the five draft requests of a ``parallel:5`` round (agent
i's prompt variant, temperature and seed, exactly as the strategies build them) go to the default
embedded engines (one single-threaded engine per core, one slot each; requests to the least busy),
all five at once, as a team sends them. llama.cpp reports per request how many prompt tokens it had
to process (the rest came from the slot's prompt cache: the common prefix with the previous request
on that slot) and how long prompt processing and decoding took. The report: the share of the round's
engine time spent on prompts, the share of prompt tokens served from the cache, and the round's wall
time against one agent's single attempt on the same problem (the round/attempt ratio).

Usage (an otherwise idle machine):
  python benchmarks/round_split.py --json
  python benchmarks/round_split.py --problems 3 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time

import httpx

from memdoor.agents.team import team_configs
from memdoor.models.local import LocalModel
from memdoor.problems.load import load_problems
from memdoor.strategies import messages


async def post(client: httpx.AsyncClient, body: dict) -> dict:
    r = await client.post("/v1/chat/completions", json=body)
    r.raise_for_status()
    return r.json()


async def main_async(args) -> dict:
    model = LocalModel(args.model)
    agents = team_configs([f"local:{args.model}"], 5, max_tokens=args.max_tokens)
    rounds = []
    try:
        await model.start()
        clients = [
            httpx.AsyncClient(base_url=e.base_url or "", headers=e.headers(), timeout=600, trust_env=False)
            for e in model.engines
        ]
        busy = [0] * len(clients)

        async def send(body: dict) -> dict:
            i = min(range(len(clients)), key=lambda k: busy[k])
            busy[i] += 1
            try:
                return await post(clients[i], body)
            finally:
                busy[i] -= 1

        for problem in load_problems("humaneval")[: args.problems]:
            bodies = [
                {
                    "messages": messages.draft(problem.public_view(), a.prompt_variant),
                    "temperature": a.temperature,
                    "seed": a.seed,
                    "max_tokens": args.max_tokens,
                    "cache_prompt": True,
                }
                for a in agents
            ]
            t0 = time.perf_counter()
            await send(bodies[0])
            attempt_s = time.perf_counter() - t0  # one agent alone (its prompt may be cached from before)
            t0 = time.perf_counter()
            answers = await asyncio.gather(*(send(b) for b in bodies))
            round_s = time.perf_counter() - t0
            timings = [a.get("timings", {}) for a in answers]
            prompt_total = sum(a["usage"]["prompt_tokens"] for a in answers)
            rounds.append(
                {
                    "problem": problem.id,
                    "attempt_s": attempt_s,
                    "round_s": round_s,
                    "prompt_ms": sum(t.get("prompt_ms", 0.0) for t in timings),
                    "decode_ms": sum(t.get("predicted_ms", 0.0) for t in timings),
                    "prompt_tokens": prompt_total,
                    "prompt_processed": sum(t.get("prompt_n", 0) for t in timings),
                    "completion_tokens": sum(a["usage"]["completion_tokens"] for a in answers),
                }
            )
        for c in clients:
            await c.aclose()
    finally:
        await model.aclose()
    prompt_ms = sum(r["prompt_ms"] for r in rounds)
    decode_ms = sum(r["decode_ms"] for r in rounds)
    return {
        "model": args.model,
        "engines": model.config.n_replicas(),
        "rounds": rounds,
        "prompt_share_of_engine_time": prompt_ms / (prompt_ms + decode_ms) if prompt_ms + decode_ms else None,
        "prompt_tokens_from_cache": 1
        - sum(r["prompt_processed"] for r in rounds) / max(1, sum(r["prompt_tokens"] for r in rounds)),
        "round_over_attempt_median": statistics.median(r["round_s"] / r["attempt_s"] for r in rounds),
        "load_after": os.getloadavg(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--problems", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    doc = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print(
        f"{doc['model']}: prompt processing {100 * doc['prompt_share_of_engine_time']:.1f}% of engine time, "
        f"{100 * doc['prompt_tokens_from_cache']:.1f}% of prompt tokens from the cache, "
        f"round/attempt {doc['round_over_attempt_median']:.2f}×"
    )


if __name__ == "__main__":
    main()
