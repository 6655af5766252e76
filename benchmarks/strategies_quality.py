"""Quality, cost and overhead of every team strategy on real problems with the embedded model.

For each problem and strategy it runs :func:`memdoor.run.solve.solve_problem` and records: passed
(graded on hidden tests), the oracle (any candidate correct), tokens, calls, wall seconds, and how the
wall time splits between model calls, sandbox runs and Memdoor itself. It also reports the batching
ratio: the wall time of a parallel round (all agents drafting at once, one shared engine) over the
wall time of one single attempt on the same problems.

Memdoor's own time = wall time during which no model call and no sandbox run was in progress
(measured from the start and end of every call and every run, which this script times by wrapping
the model and the sandbox; the library itself is not changed).

Results go to --out (JSON Lines, one row per problem x strategy, written as each finishes; rows
already there are skipped, so an interrupted run resumes). A Markdown summary is printed at the end.

  .venv/bin/python benchmarks/strategies_quality.py --suite humaneval --limit 10 --out /tmp/sq-he.jsonl
  .venv/bin/python benchmarks/strategies_quality.py --suite ../shared/data/leetcode_2024_dev.jsonl \\
      --difficulty easy --limit 5 --out /tmp/sq-lc.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memdoor.core.budget import Budget
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.problems.load import load_problems
from memdoor.run.config import SolveConfig, StrategySpec
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem
from memdoor.sandbox import SandboxConfig, open_sandbox

STRATEGIES = ["single", "parallel", "sequential", "shared", "hybrid"]


class Intervals:
    """Start/end times of activities (model calls, sandbox runs), thread-safe; union length on demand."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spans: list[tuple[str, float, float]] = []

    def add(self, what: str, start: float, end: float) -> None:
        with self._lock:
            self.spans.append((what, start, end))

    def since(self, t0: float) -> list[tuple[str, float, float]]:
        with self._lock:
            return [s for s in self.spans if s[1] >= t0]

    @staticmethod
    def union(spans: Sequence[tuple[str, float, float]], kinds: Sequence[str] | None = None) -> float:
        chosen = sorted((a, b) for k, a, b in spans if kinds is None or k in kinds)
        total, cur_a, cur_b = 0.0, None, None
        for a, b in chosen:
            if cur_b is None or a > cur_b:
                if cur_b is not None:
                    total += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        if cur_b is not None:
            total += cur_b - cur_a
        return total


class TimedModel:
    """Wraps a model: records each call's span."""

    def __init__(self, inner, spans: Intervals):
        self.inner, self.spans, self.spec = inner, spans, inner.spec

    async def complete(self, messages, **kw):
        t = time.monotonic()
        try:
            return await self.inner.complete(messages, **kw)
        finally:
            self.spans.add("model", t, time.monotonic())

    async def aclose(self) -> None:
        await self.inner.aclose()


class TimedSandbox:
    """Wraps a sandbox: records each run's span."""

    def __init__(self, inner, spans: Intervals):
        self.inner, self.spans, self.name = inner, spans, inner.name

    def run(self, code, tests, **kw):
        t = time.monotonic()
        try:
            return self.inner.run(code, tests, **kw)
        finally:
            self.spans.add("sandbox", t, time.monotonic())


def done_keys(path: Path) -> set[tuple[str, str]]:
    if not path.exists():
        return set()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r["problem_id"], r["strategy"]) for r in rows}


async def run(args: argparse.Namespace) -> None:
    problems = load_problems(args.suite)
    if args.difficulty:
        problems = [p for p in problems if p.difficulty == args.difficulty]
    problems = problems[args.start : args.start + args.limit]
    spans = Intervals()
    pool = ModelPool()
    for spec in args.model:
        pool.add(spec, TimedModel(ModelPool().get(spec), spans))
    sandbox = TimedSandbox(open_sandbox(SandboxConfig()), spans)
    out = Path(args.out)
    done = done_keys(out)
    try:
        for problem in problems:
            for name in args.strategies:
                spec = StrategySpec(name=name, agents=1 if name == "single" else args.agents)
                if (problem.id, str(spec)) in done:
                    continue
                config = SolveConfig(
                    strategy=spec,
                    models=args.model,
                    budget=Budget(tokens=args.budget_tokens),
                    seed=args.seed,
                    max_tokens=args.max_tokens,
                )
                env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory())
                t0 = time.monotonic()
                sol = await solve_problem(problem, config, env)
                wall = time.monotonic() - t0
                mine = spans.since(t0)
                busy = Intervals.union(mine)
                drafts = [(a, b) for k, a, b in mine if k == "model"]
                first_round = _first_round(sol, mine)
                tot = sol.ledger.totals()
                row: dict[str, Any] = {
                    "problem_id": problem.id,
                    "strategy": str(spec),
                    "passed": sol.passed,
                    "oracle": sol.oracle,
                    "stopped": sol.stopped,
                    "error": sol.error,
                    "calls": tot.calls,
                    "prompt_tokens": tot.prompt_tokens,
                    "completion_tokens": tot.completion_tokens,
                    "wall_s": round(wall, 3),
                    "model_s": round(Intervals.union(mine, ["model"]), 3),
                    "sandbox_s": round(Intervals.union(mine, ["sandbox"]), 3),
                    "memdoor_s": round(max(0.0, wall - busy), 4),
                    "first_round_s": round(first_round, 3) if first_round else None,
                    "model_calls_timed": len(drafts),
                }
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(
                    f"{problem.id:<14} {spec!s:<13} passed={sol.passed!s:<5} oracle={sol.oracle!s:<5} "
                    f"tokens={tot.tokens:<6} wall={wall:6.1f}s memdoor={row['memdoor_s']:.3f}s",
                    flush=True,
                )
    finally:
        await pool.aclose()
    summarize(out)


def _first_round(sol, spans) -> float | None:
    """Wall time of the first round of model calls: from the first call's start to the end of the
    last call that started before any first-round call ended (the concurrent draft round)."""
    calls = sorted((a, b) for k, a, b in spans if k == "model")
    if not calls:
        return None
    first_end = min(b for a, b in calls)
    round_calls = [(a, b) for a, b in calls if a <= first_end]
    return max(b for _, b in round_calls) - calls[0][0]


def summarize(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["strategy"], []).append(r)
    print(
        "\n| strategy | problems | pass@1 | oracle | calls/problem | tokens/problem | seconds/problem "
        "| Memdoor own time |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, rs in by.items():
        n = len(rs)
        wall = sum(r["wall_s"] for r in rs)
        print(
            f"| {name} | {n} | {100 * sum(bool(r['passed']) for r in rs) / n:.1f}% "
            f"| {100 * sum(bool(r['oracle']) for r in rs) / n:.1f}% "
            f"| {sum(r['calls'] for r in rs) / n:.1f} "
            f"| {sum(r['prompt_tokens'] + r['completion_tokens'] for r in rs) / n:.0f} "
            f"| {wall / n:.1f} | {100 * sum(r['memdoor_s'] for r in rs) / wall:.2f}% |"
        )
    single = {r["problem_id"]: r["first_round_s"] for r in by.get("single", []) if r["first_round_s"]}
    for name, rs in by.items():
        if not name.startswith("parallel"):
            continue
        pairs = [(r["first_round_s"], single[r["problem_id"]]) for r in rs if r["problem_id"] in single]
        if pairs:
            ratio = sum(p for p, _ in pairs) / sum(s for _, s in pairs)
            med = statistics.median(p / s for p, s in pairs)
            print(
                f"\nbatching: a {name} draft round took {ratio:.2f}x the wall time of one single attempt "
                f"(total over {len(pairs)} problems; median per problem {med:.2f}x)"
            )
        singles = {r["problem_id"]: r for r in by.get("single", [])}
        both = [(r, singles[r["problem_id"]]) for r in rs if r["problem_id"] in singles]
        if both:
            par = sum(r["completion_tokens"] for r, _ in both) / sum(r["model_s"] for r, _ in both)
            one = sum(s["completion_tokens"] for _, s in both) / sum(s["model_s"] for _, s in both)
            print(
                f"throughput: {par:.1f} completion tokens/s during {name} rounds vs {one:.1f} for single "
                f"attempts ({par / one:.2f}x)"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="humaneval", help="problem source (humaneval, a .jsonl, a .yaml)")
    p.add_argument("--difficulty", help="keep only problems of this difficulty (easy, medium, hard)")
    p.add_argument("--start", type=int, default=0, help="index of the first problem (default 0)")
    p.add_argument("--limit", type=int, default=10, help="number of problems (default 10)")
    p.add_argument("--strategies", nargs="+", default=STRATEGIES, choices=STRATEGIES)
    p.add_argument("--agents", type=int, default=5, help="team size of every team strategy (default 5)")
    p.add_argument("--model", action="append", help="model spec(s) (default local:qwen2.5-coder-0.5b)")
    p.add_argument("--max-tokens", type=int, default=512, help="completion tokens per call (default 512)")
    p.add_argument("--budget-tokens", type=int, help="token budget per problem (default none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="JSON Lines results file (appended; resumes)")
    p.add_argument("--summary-only", action="store_true", help="only print the summary of --out")
    args = p.parse_args()
    args.model = args.model or ["local:qwen2.5-coder-0.5b"]
    if args.summary_only:
        summarize(Path(args.out))
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
