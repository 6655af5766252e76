"""Grading speed: Memdoor's isolated sandbox against the official LiveCodeBench grader, side by side.

Grades every problem of ../shared/data/leetcode_2024_dev.jsonl with its reference solution
(../shared/data/reference_solutions_dev.jsonl; ~13,000 tests) twice in one run: with Memdoor (real
isolation, ``grade_many`` with WORKERS candidates at once) and with the official grader
(``livecodebench.evaluation.compute_code_generation_metrics.check_correctness``, one process per sample,
WORKERS samples at once in a process pool, as its ``evaluate_generations`` does). Both must pass every
reference solution. Prints wall times, the ratio and tests per second; ``--json`` adds one JSON line.

``--floor`` also times the work no grader can avoid: each reference solution loaded once and called on
every test input in WORKERS warm processes (prelude already imported, no isolation, no process per
sample, no comparison, no time limits). What a grader adds is its wall time minus the floor's; the
overhead ratio (official's overhead / Memdoor's) is what a faster grader can improve, while the floor
(the candidates' own computation) bounds the plain wall-time ratio.

usage: python benchmarks/grade_speed.py [--data DIR] [--limit N] [--workers 2] [--rounds 1]
                                       [--isolation auto|bwrap|unshare] [--no-prestart] [--floor] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from memdoor.judging.programs import grade_many
from memdoor.problems.load import load_problems
from memdoor.sandbox import SandboxConfig, open_sandbox

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _quiet() -> None:
    """Pool initializer: candidates' prints go nowhere (as Memdoor's sandbox does with them)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _official_one(job: tuple[str, str, str]) -> bool:
    """One sample through the official grader (runs in a pool worker)."""
    from livecodebench.evaluation.compute_code_generation_metrics import check_correctness

    _, input_output, code = job
    try:
        res, _ = check_correctness({"input_output": input_output}, code, timeout=6, debug=False)
    except Exception:  # the sample killed the grader's process: a failure, as evaluate_generations counts it
        return False
    return bool(res) and all(r is True or (not isinstance(r, bool) and r > 0) for r in res)


_FLOOR_PRELUDE = None


def _floor_one(job: tuple[str, str, str]) -> bool:
    """The candidate's own work on every test, in a warm process: the floor of any grader's time."""
    global _FLOOR_PRELUDE
    from livecodebench.evaluation.testing_util import import_string

    if _FLOOR_PRELUDE is None:
        _FLOOR_PRELUDE = {}
        exec(import_string, _FLOOR_PRELUDE)
    _, input_output, code = job
    io_spec = json.loads(input_output)
    fn = io_spec["fn_name"]
    try:
        if fn:
            env = dict(_FLOOR_PRELUDE)
            exec(code, env)
            target = getattr(env["Solution"](), fn) if "Solution" in env else env[fn]
            for text in io_spec["inputs"]:
                target(*[json.loads(line) for line in text.split("\n")])
        else:
            import io

            compiled = compile(code, "<candidate>", "exec")
            for text in io_spec["inputs"]:
                sys.stdin = io.StringIO(text)
                exec(compiled, {**_FLOOR_PRELUDE, "__name__": "__main__"})
    except BaseException:  # a failing reference only means the floor is lower
        return False
    return True


def run_floor(jobs, workers: int) -> tuple[float, int]:
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, initializer=_quiet) as pool:
        done = sum(pool.map(_floor_one, jobs))
    return time.perf_counter() - start, done


def _tests_field(field: str) -> list[dict]:
    return json.loads(field)


def load(data: Path, limit: int | None):
    """(problems, codes, official jobs, test count) for the first ``limit`` problems with a reference."""
    refs = {}
    for line in (data / "reference_solutions_dev.jsonl").read_text().splitlines():
        r = json.loads(line)
        refs[str(r["question_id"])] = r["reference_solution"]
    rows = [json.loads(line) for line in (data / "leetcode_2024_dev.jsonl").read_text().splitlines()]
    rows = [r for r in rows if str(r["question_id"]) in refs][:limit]
    problems = {p.id: p for p in load_problems(data / "leetcode_2024_dev.jsonl")}
    ours, official, n_tests = [], [], 0
    for row in rows:
        pid = str(row["question_id"])
        tests = _tests_field(row["public_test_cases"]) + _tests_field(row["private_test_cases"])
        fn = json.loads(row["metadata"]).get("func_name") if row.get("metadata") else None
        io = json.dumps(
            {"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests], "fn_name": fn}
        )
        ours.append((problems[pid], refs[pid]))
        official.append((pid, io, refs[pid]))
        n_tests += len(tests)
    return ours, official, n_tests


def run_memdoor(jobs, workers: int, isolation: str, prestart: bool) -> tuple[float, int, str]:
    with open_sandbox(SandboxConfig(workers=workers, isolation=isolation, prestart=prestart)) as sandbox:
        start = time.perf_counter()
        passed = sum(v.passed for v in grade_many(jobs, sandbox, workers=workers))
        return time.perf_counter() - start, passed, sandbox.name


def run_official(jobs, workers: int) -> tuple[float, int]:
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, initializer=_quiet) as pool:
        passed = sum(pool.map(_official_one, jobs))
    return time.perf_counter() - start, passed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data directory")
    ap.add_argument("--limit", type=int, default=None, help="only the first N problems")
    ap.add_argument("--workers", type=int, default=2, help="candidates graded at once by each grader")
    ap.add_argument(
        "--rounds", type=int, default=1, help="alternate the two graders this many times; best kept"
    )
    ap.add_argument(
        "--isolation", default="auto", choices=["auto", "bwrap", "unshare"], help="Memdoor's isolation"
    )
    ap.add_argument("--no-prestart", action="store_true", help="do not start the next sandbox in advance")
    ap.add_argument(
        "--floor", action="store_true", help="also time the candidates' own work alone (no grader)"
    )
    ap.add_argument("--json", action="store_true", help="also print one JSON line with the figures")
    args = ap.parse_args(argv)

    ours_jobs, official_jobs, n_tests = load(args.data, args.limit)
    n = len(ours_jobs)
    print(f"{n} problems, {n_tests} tests, {args.workers} workers, {os.cpu_count()} CPUs, "
          f"load average at start {os.getloadavg()[0]:.1f}")  # fmt: skip
    best_ours = best_official = best_floor = float("inf")
    passed_ours = passed_official = 0
    isolation = ""
    for r in range(args.rounds):
        t, passed_ours, isolation = run_memdoor(ours_jobs, args.workers, args.isolation, not args.no_prestart)
        best_ours = min(best_ours, t)
        print(f"round {r + 1}: memdoor ({isolation}) {t:7.2f} s, {passed_ours}/{n} passed", flush=True)
        t, passed_official = run_official(official_jobs, args.workers)
        best_official = min(best_official, t)
        print(f"round {r + 1}: official        {t:7.2f} s, {passed_official}/{n} passed", flush=True)
        if args.floor:
            t, ran = run_floor(official_jobs, args.workers)
            best_floor = min(best_floor, t)
            print(f"round {r + 1}: floor (no grader) {t:5.2f} s, {ran}/{n} ran", flush=True)
    ratio = best_official / best_ours
    print()
    print(f"{'grader':<22}{'wall s':>9}{'tests/s':>10}{'passed':>10}")
    print(
        f"{'memdoor (' + isolation + ')':<22}{best_ours:>9.2f}{n_tests / best_ours:>10.0f}{passed_ours:>7}/{n}"
    )
    print(
        f"{'official LiveCodeBench':<22}{best_official:>9.2f}{n_tests / best_official:>10.0f}{passed_official:>7}/{n}"
    )
    print(f"memdoor is {ratio:.2f}x the official grader's speed (official wall / memdoor wall); "
          f"load average at end {os.getloadavg()[0]:.1f}")  # fmt: skip
    figures = {}
    if args.floor:
        over_ours, over_official = best_ours - best_floor, best_official - best_floor
        figures = {
            "floor_s": round(best_floor, 3),
            "memdoor_overhead_s": round(over_ours, 3),
            "official_overhead_s": round(over_official, 3),
            "overhead_ratio": round(over_official / over_ours, 3) if over_ours > 0 else None,
        }
        print(f"floor (the candidates' own work, no grader) {best_floor:.2f} s: grading overhead memdoor "
              f"{over_ours:.2f} s, official {over_official:.2f} s ({figures['overhead_ratio']}x); the best any "
              f"grader could reach is {best_official / best_floor:.2f}x the official's speed")  # fmt: skip
    if args.json:
        print(
            json.dumps(
                {
                    **figures,
                    "problems": n,
                    "tests": n_tests,
                    "workers": args.workers,
                    "isolation": isolation,
                    "prestart": not args.no_prestart,
                    "memdoor_s": round(best_ours, 3),
                    "official_s": round(best_official, 3),
                    "ratio": round(ratio, 3),
                    "memdoor_tests_per_s": round(n_tests / best_ours, 1),
                    "official_tests_per_s": round(n_tests / best_official, 1),
                    "memdoor_passed": passed_ours,
                    "official_passed": passed_official,
                    "python": platform.python_version(),
                }
            )
        )
    return 0 if passed_ours == passed_official == n else 1


if __name__ == "__main__":
    sys.exit(main())
