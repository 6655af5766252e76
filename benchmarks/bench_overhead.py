"""What the bench machinery itself costs, next to the model and sandbox time it wraps.

Measures, on synthetic data (no model, no sandbox):

1. results store: commit latency of one result (WAL, synchronous=FULL) with realistic JSON blobs;
2. bench loop: pairs per second through ``run_bench`` with an instant stand-in solve (loop + store);
3. report: ``analyse`` (10,000 bootstrap resamples) and ``write_report`` (Markdown, HTML, PNGs) for a
   full-size run.

Usage: .venv/bin/python benchmarks/bench_overhead.py [--results 2000] [--problems 1000] [--rows 6]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

from memdoor.bench.analysis import analyse
from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.loop import BenchOptions, run_bench
from memdoor.bench.progress import PlainProgress
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.report import write_report
from memdoor.bench.store import ResultsStore
from memdoor.core.ledger import CallRecord, Ledger
from memdoor.core.problem import Problem, TestCase
from memdoor.core.solution import Solution

STRATEGIES = "single,parallel:5,sequential:5,shared:5,hybrid:5"
BASELINE = "single@local:qwen2.5-coder-1.5b"


def config_for(rows: int) -> BenchConfig:
    names = STRATEGIES.split(",")[: max(1, rows - 1)]
    return BenchConfig(
        suite="synthetic",
        rows=parse_rows(",".join(names), ["local:qwen2.5-coder-0.5b"], [BASELINE] if rows > 1 else []),
    )


def infos(n: int) -> list[ProblemInfo]:
    return [
        ProblemInfo(
            id=f"p{i:05d}",
            position=i,
            difficulty=("easy", "medium", "hard")[i % 3],
            platform=("leetcode", "atcoder", "codeforces")[i % 3],
            release_date=date(2024, 1 + i % 12, 1),
        )
        for i in range(n)
    ]


def blob(kb: int) -> str:
    return json.dumps({"events": ["x" * 100] * (kb * 10)})


def bench_store(n: int, tmp: Path) -> dict:
    config = config_for(2)
    problems = infos(n)
    run = RunRecord(config=config, problems_sha256="synthetic", problem_count=n)
    trace, ledger = blob(20), blob(2)
    latencies = []
    with ResultsStore.create_or_resume(tmp / "store", run, problems) as store:
        for p in problems:
            rec = ResultRecord(
                problem_id=p.id,
                row="single",
                status="done",
                passed=True,
                code="def f():\n    return 1\n" * 20,
                trace_json=trace,
                ledger_json=ledger,
                verdict_json=blob(5),
                solution_json=blob(5),
            )
            t0 = time.perf_counter()
            store.record(rec)
            latencies.append(time.perf_counter() - t0)
    latencies.sort()
    return {
        "results": n,
        "commit_ms_mean": 1000 * statistics.fmean(latencies),
        "commit_ms_p95": 1000 * latencies[int(0.95 * (n - 1))],
        "db_mb": (tmp / "store" / "results.sqlite").stat().st_size / 1e6,
    }


def bench_loop(n: int, tmp: Path) -> dict:
    config = config_for(2)
    problems = [
        Problem(id=f"p{i:05d}", statement="s", public_tests=[TestCase(kind="stdin", input="", output="")])
        for i in range(n)
    ]
    run = RunRecord(config=config, problems_sha256="synthetic-loop", problem_count=n)

    async def solve(problem, solve_config, env):
        ledger = Ledger(calls=[CallRecord(agent="a0", model="m", prompt_tokens=100, completion_tokens=50)])
        return Solution(
            problem_id=problem.id, strategy=str(solve_config.strategy), code="x = 1", ledger=ledger
        )

    async def main() -> float:
        with ResultsStore.create_or_resume(
            tmp / "loop", run, [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
        ) as store:
            t0 = time.perf_counter()
            await run_bench(
                problems,
                config,
                store,
                lambda: None,
                options=BenchOptions(concurrency=4),
                progress=PlainProgress(io.StringIO()),
                solve=solve,
            )
            return time.perf_counter() - t0

    seconds = asyncio.run(main())
    pairs = n * len(config.rows)
    return {"pairs": pairs, "seconds": seconds, "pairs_per_second": pairs / seconds}


def bench_report(problems: int, rows: int, tmp: Path) -> dict:
    config = config_for(rows)
    run = RunRecord(config=config, problems_sha256="synthetic-report", problem_count=problems)
    rng = random.Random(0)
    with ResultsStore.create_or_resume(tmp / "report", run, infos(problems)) as store:
        for p in range(problems):
            for k, row in enumerate(config.rows):
                passed = rng.random() < 0.3 + 0.05 * k
                store.record(
                    ResultRecord(
                        problem_id=f"p{p:05d}",
                        row=row.name,
                        status="done",
                        passed=passed,
                        oracle=passed or rng.random() < 0.2,
                        prompt_tokens=rng.randint(200, 3000) * (1 + k),
                        completion_tokens=rng.randint(50, 500) * (1 + k),
                        calls=1 + k,
                        wall_seconds=rng.uniform(1, 60),
                    )
                )
    with ResultsStore.open(tmp / "report") as store:
        t0 = time.perf_counter()
        analysis = analyse(store)
        t1 = time.perf_counter()
    write_report(analysis, tmp / "report")
    t2 = time.perf_counter()
    return {
        "problems": problems,
        "rows": len(config.rows),
        "analyse_seconds": t1 - t0,
        "write_report_seconds": t2 - t1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=2000, help="results written in the store benchmark")
    parser.add_argument("--loop-problems", type=int, default=500, help="problems in the loop benchmark")
    parser.add_argument("--problems", type=int, default=1000, help="problems in the report benchmark")
    parser.add_argument("--rows", type=int, default=6, help="rows in the report benchmark")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdoor-bench-overhead-") as d:
        tmp = Path(d)
        out = {
            "store": bench_store(args.results, tmp),
            "loop": bench_loop(args.loop_problems, tmp),
            "report": bench_report(args.problems, args.rows, tmp),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
