"""Grade every HumanEval-X canonical solution (JavaScript or Rust) in the sandbox, known-bad problems
included, and print which fail and the throughput.

    .venv/bin/python benchmarks/humaneval_x_canonical.py javascript [--workers 2] [--limit N]
    .venv/bin/python benchmarks/humaneval_x_canonical.py rust --limit 10

Every problem that fails should be in memdoor.problems.humaneval_x.KNOWN_BAD (and vice versa).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time

from memdoor.grading import grade_many
from memdoor.problems.humaneval_x import KNOWN_BAD, data_file, load_humaneval_x
from memdoor.sandbox import SandboxConfig, open_sandbox


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("language", choices=["javascript", "rust"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="only the first N problems (0: all)")
    args = ap.parse_args()
    with gzip.open(data_file(args.language), "rt") as f:
        solutions = {r["task_id"]: r["canonical_solution"] for r in map(json.loads, f)}
    problems = load_humaneval_x(args.language, keep_bad=True)
    if args.limit:
        problems = problems[: args.limit]
    with open_sandbox(SandboxConfig(workers=args.workers)) as sb:
        started = time.monotonic()
        verdicts = list(grade_many(((p, solutions[p.id]) for p in problems), sb, workers=args.workers))
        elapsed = time.monotonic() - started
    failed = {p.id: v for p, v in zip(problems, verdicts, strict=True) if not v.passed}
    print(f"{args.language}: {len(problems) - len(failed)}/{len(problems)} canonical solutions pass "
          f"({sb.name}, {args.workers} workers, {elapsed:.1f} s, {len(problems) / elapsed:.2f} problems/s)")  # fmt: skip
    for pid, v in failed.items():
        detail = next((t.detail for t in v.tests if t.status != "passed"), "")
        known = "known bad" if pid in KNOWN_BAD else "NOT IN KNOWN_BAD"
        print(f"  {pid}: {v.status} ({known}): {detail[:160]!r}")
    unexpected = [p.id for p in problems if p.id in KNOWN_BAD and p.id not in failed]
    for pid in unexpected:
        print(f"  {pid}: passes but is listed in KNOWN_BAD")
    return 1 if unexpected or any(pid not in KNOWN_BAD for pid in failed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
