"""Does speculative decoding change what the model writes? Outputs with and without it, same requests.

For the first ``--problems`` HumanEval problems, two requests each, one at a time on one engine
(``replicas=1``, one slot, so nothing else shares a batch): the official draft prompt at temperature 0
(greedy), and the same prompt sampled at temperature 0.8 with a fixed seed. Three passes over them:

- ``none``: no speculation;
- ``none-again``: no speculation, again — how often the engine repeats itself exactly (the floor);
- ``SPEC``: with ``--speculative`` (default ``ngram-simple``).

llama.cpp accepts a drafted token only when the token it samples itself at that position is the
same, so the sampled distribution is the model's own; outputs can still differ where the logits of a
batched verification step differ from one-token steps in the last bits. The check reports, per
temperature, the share of identical outputs (spec vs none, and none vs none-again), and for the
sampled requests the mean completion length and mean token log-probability of each pass (a changed
distribution would move them), with the pass rate of the greedy answers on HumanEval's hidden check.

Usage:
  python benchmarks/speculative_check.py --json
  python benchmarks/speculative_check.py --problems 10 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics

from memdoor.judging.judge import Judge
from memdoor.models.engine import EngineConfig
from memdoor.models.local import LocalModel
from memdoor.problems.humaneval import load_humaneval
from memdoor.sandbox.open import open_sandbox
from memdoor.strategies import messages
from memdoor.text.extract import candidate_code


async def one_pass(name: str, speculative: str, problems: list, max_tokens: int) -> list[dict]:
    model = LocalModel(name, config=EngineConfig(replicas=1, slots=1, speculative=speculative))
    out = []
    try:
        for p in problems:
            for temperature, seed in ((0.0, 0), (0.8, 2000)):
                r = await model.complete(
                    messages.draft(p, 0),
                    temperature=temperature,
                    seed=seed,
                    max_tokens=max_tokens,
                    logprobs=True,
                )
                c = r.completions[0]
                out.append(
                    {
                        "problem": p.id,
                        "temperature": temperature,
                        "text": c.text,
                        "tokens": r.usage.completion_tokens,
                        "mean_logprob": c.mean_logprob,
                        "seconds": r.usage.latency_s,
                    }
                )
    finally:
        await model.aclose()
    return out


async def pass_rate(problems: list, answers: list[dict]) -> float:
    by_id = {p.id: p for p in problems}
    with open_sandbox() as sandbox:
        judge = Judge(sandbox)
        verdicts = await asyncio.gather(
            *(
                judge.grade(by_id[a["problem"]], candidate_code(a["text"], by_id[a["problem"]]))
                for a in answers
            )
        )
    return sum(v.passed for v in verdicts) / len(verdicts)


def same(a: list[dict], b: list[dict], temperature: float) -> float:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x["temperature"] == temperature]
    return sum(x["text"] == y["text"] for x, y in pairs) / len(pairs)


def stats(run: list[dict], temperature: float) -> dict:
    rows = [r for r in run if r["temperature"] == temperature]
    lps = [r["mean_logprob"] for r in rows if r["mean_logprob"] is not None]
    return {
        "mean_tokens": statistics.mean(r["tokens"] for r in rows),
        "mean_logprob": statistics.mean(lps) if lps else None,
        "tok_per_s": sum(r["tokens"] for r in rows) / sum(r["seconds"] for r in rows),
    }


async def main_async(args: argparse.Namespace) -> dict:
    problems = load_humaneval()[: args.problems]
    runs = {
        "none": await one_pass(args.model, "none", problems, args.max_tokens),
        "none-again": await one_pass(args.model, "none", problems, args.max_tokens),
        args.speculative: await one_pass(args.model, args.speculative, problems, args.max_tokens),
    }
    greedy = {k: [r for r in v if r["temperature"] == 0.0] for k, v in runs.items()}
    return {
        "model": args.model,
        "problems": len(problems),
        "identical": {
            f"{t}": {
                "none vs none-again": same(runs["none"], runs["none-again"], t),
                f"none vs {args.speculative}": same(runs["none"], runs[args.speculative], t),
            }
            for t in (0.0, 0.8)
        },
        "by_pass": {k: {"greedy": stats(v, 0.0), "sampled": stats(v, 0.8)} for k, v in runs.items()},
        "greedy_pass_rate": {k: await pass_rate(problems, v) for k, v in greedy.items()},
        "load_after": os.getloadavg(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--speculative", default="ngram-simple", choices=["ngram-simple", "ngram-mod"])
    ap.add_argument("--problems", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    doc = asyncio.run(main_async(args))
    print(json.dumps(doc, indent=1) if args.json else json.dumps(doc["identical"]))


if __name__ == "__main__":
    main()
