"""Engine settings side by side on the real workload: ``memdoor bench`` on HumanEval/0-2 with four rows.

Each setting runs ``memdoor bench humaneval --limit 3 --strategies single,parallel:5,sequential:5,hybrid:5
--model local:qwen2.5-coder-0.5b?OPTIONS --max-tokens 512 --seed 0`` in a fresh results directory (so
nothing is replayed from another setting), the settings interleaved ``--repeats`` times. A run's work
depends on what the model wrote (a strategy stops early when the public tests pass), so settings are
compared by throughput over the whole run: tokens the run's model calls generated per wall second
(and per second of summed call latency), beside the wall time itself.

Settings (names → spec options):
  old     ?replicas=1&threads=2&slots=5&speculative=none   one engine batching five sequences on all cores
                                                           (the former default)
  new     ?speculative=none                                one single-threaded engine per core, one
                                                           sequence each
  slots2  ?slots=2&speculative=none                        as new, two sequences per engine
  ngram   ?speculative=ngram-simple                        as new, with prompt-lookup speculative decoding
                                                           (the defaults now)

Usage (an otherwise idle machine; about 7-12 minutes a run on 2 cores):
  python benchmarks/engine_settings.py --json
  python benchmarks/engine_settings.py --settings old,new --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMDOOR = Path(sys.executable).with_name("memdoor")
SETTINGS = {
    "old": "?replicas=1&threads=2&slots=5&speculative=none",
    "new": "?speculative=none",
    "slots2": "?slots=2&speculative=none",
    "ngram": "?speculative=ngram-simple",
}


def run(options: str, out: Path, model: str) -> dict:
    cmd = [
        str(MEMDOOR), "bench", "humaneval", "--limit", "3",
        "--strategies", "single,parallel:5,sequential:5,hybrid:5",
        "--model", f"local:{model}{options}", "--max-tokens", "512", "--seed", "0", "--out", str(out),
    ]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=7200)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"bench failed: {proc.stderr[-2000:]}")
    completion = prompt = calls = 0
    latency = 0.0
    for line in (out / "calls.jsonl").read_text().splitlines():
        usage = json.loads(line)["response"]["usage"]
        completion += usage["completion_tokens"]
        prompt += usage["prompt_tokens"]
        latency += usage["latency_s"]
        calls += 1
    return {
        "wall_s": wall,
        "calls": calls,
        "completion_tokens": completion,
        "prompt_tokens": prompt,
        "tok_per_wall_s": completion / wall,
        "tok_per_call_s": completion / latency if latency else 0.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--settings", default="old,new,ngram,slots2")
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = args.settings.split(",")
    runs: dict[str, list[dict]] = {n: [] for n in names}
    base = Path(tempfile.mkdtemp(prefix="memdoor-engine-settings-"))
    try:
        for rep in range(args.repeats):
            order = names if rep % 2 == 0 else names[::-1]  # interleaved, alternating order
            for name in order:
                result = run(SETTINGS[name], base / f"{name}-{rep}", args.model)
                runs[name].append(result)
                print(f"{name} run {rep + 1}: {json.dumps(result)}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    summary = {
        n: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "tok_per_wall_s", "tok_per_call_s")}
        for n, rs in runs.items()
    }
    ref = summary.get("old")
    for s in summary.values():
        s["throughput_vs_old"] = s["tok_per_wall_s"] / ref["tok_per_wall_s"] if ref else None
    doc = {
        "model": args.model,
        "repeats": args.repeats,
        "median": summary,
        "runs": runs,
        "load_after": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    for n, s in summary.items():
        vs = f", {s['throughput_vs_old']:.2f}x old" if s["throughput_vs_old"] else ""
        print(f"{n}: wall {s['wall_s']:.0f} s, {s['tok_per_wall_s']:.1f} generated tok/s{vs}")


if __name__ == "__main__":
    main()
