"""Grading throughput per language: HumanEval (Python) and HumanEval-X (JavaScript, Rust) canonical solutions
graded in the real sandbox, side by side, with the same workers and isolation.

Python runs in the harness (sandbox prestarted while the previous candidate runs); JavaScript starts node
in a fresh sandbox per test; Rust compiles in one sandbox (crates prebuilt, linked read-only) and runs in a
second. Prints candidates per second and seconds per candidate for each, and the ratios to Python.

usage: python benchmarks/grade_speed_languages.py [--limit 40] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import time

from memdoor.judging.programs import grade_many
from memdoor.problems.humaneval import data_path
from memdoor.problems.humaneval_x import data_file, load_humaneval_x
from memdoor.problems.load import load_problems
from memdoor.sandbox import SandboxConfig, open_sandbox


def _solutions(path) -> dict[str, str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return {r["task_id"]: r["canonical_solution"] for r in map(json.loads, f)}


def jobs(language: str, limit: int):
    if language == "python":
        problems, solutions = load_problems("humaneval"), _solutions(data_path())
    else:
        problems, solutions = load_humaneval_x(language), _solutions(data_file(language))
    return [(p, solutions[p.id]) for p in problems[:limit]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=40, help="problems per language (the first N)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = {}
    with open_sandbox(SandboxConfig(workers=args.workers)) as sb:
        for language in ("python", "javascript", "rust"):
            work = jobs(language, args.limit)
            started = time.monotonic()
            verdicts = list(grade_many(work, sb, workers=args.workers))
            wall = time.monotonic() - started
            rows[language] = {
                "candidates": len(work),
                "passed": sum(v.passed for v in verdicts),
                "wall_s": round(wall, 2),
                "per_s": round(len(work) / wall, 2),
                "s_per_candidate": round(wall * args.workers / len(work), 3),
            }
    base = rows["python"]["per_s"]
    print(
        f"{platform.node()} · {os.cpu_count()} cores · {sb.name} · {args.workers} workers · first {args.limit}"
    )
    print(f"{'language':<11} {'passed':>8} {'wall s':>8} {'cand/s':>8} {'s/cand':>8} {'vs python':>10}")
    for language, r in rows.items():
        print(
            f"{language:<11} {r['passed']:>4}/{r['candidates']:<3} {r['wall_s']:>8} {r['per_s']:>8} "
            f"{r['s_per_candidate']:>8} {r['per_s'] / base:>9.2f}x"
        )
    if args.json:
        print(json.dumps({"workers": args.workers, "isolation": sb.name, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
