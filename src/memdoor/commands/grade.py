"""Grade candidate programs against a problem file's tests, in an isolated sandbox.

SAMPLES is JSON Lines. Each line names its problem (``problem_id``, or ``question_id`` / ``task_id``)
and carries the candidate as one of:
  code                a model's answer: the code is taken the LiveCodeBench way (lines between the
                      last two ``` fence lines; none → empty code, which fails)
  completion          HumanEval style: raw code appended to the problem's prompt
  reference_solution  raw code, used as is
Other keys are ignored. Grading stops at a sample's first failing test unless --all-tests.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass

from memdoor.commands.options import SECONDS, at_least
from memdoor.core.errors import ProblemFormatError, UsageError
from memdoor.problems.jsonl import iter_objects
from memdoor.text.extract import extract_code

ID_KEYS = ("problem_id", "question_id", "task_id")


@dataclass
class Sample:
    index: int
    problem_id: str
    code: str


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "problems",
        help="problem source: LiveCodeBench .jsonl, 'humaneval', 'humaneval-js', 'humaneval-rust', or a "
        "user .yaml/.json file",
    )
    p.add_argument("samples", help="JSON Lines of candidates (see above)")
    p.add_argument(
        "--language",
        choices=["python", "javascript", "rust"],
        default=None,
        help="language of the answers to standard-input problems (default: each problem's own; HumanEval-X "
        "suites are JavaScript or Rust already)",
    )
    p.add_argument("--json", action="store_true", help="one JSON line per sample, in input order")
    p.add_argument(
        "--all-tests", action="store_true", help="run every test instead of stopping at the first failure"
    )
    p.add_argument(
        "--workers",
        type=at_least(0, 1024),
        default=0,
        help="candidates graded at once, 0 to 1024 (default 0: CPU cores)",
    )
    p.add_argument(
        "--timeout", type=SECONDS, default=6.0, help="seconds per test (default 6, as LiveCodeBench)"
    )
    p.add_argument(
        "--memory-mb",
        type=at_least(64, 1 << 20),
        default=2048,
        help="address-space limit per candidate, in MiB, at least 64 (default 2048)",
    )
    p.add_argument(
        "--isolation", default="auto", choices=["auto", "bwrap", "unshare"], help="sandbox isolation"
    )


def read_samples(path: str) -> list[Sample]:
    samples = []
    for line_no, row in iter_objects(path):
        pid = next((row[k] for k in ID_KEYS if k in row), None)
        if not isinstance(pid, str | int):
            raise ProblemFormatError(path, line_no, "problem_id", "missing")
        if isinstance(row.get("code"), str):
            code = extract_code(row["code"])
        elif isinstance(row.get("completion"), str):
            code = row["completion"]
        elif isinstance(row.get("reference_solution"), str):
            code = row["reference_solution"]
        else:
            raise ProblemFormatError(path, line_no, "code", "missing or not a string")
        samples.append(Sample(index=len(samples), problem_id=str(pid), code=code))
    if not samples:
        raise ProblemFormatError(path, None, None, "no samples in it")
    return samples


def run(args: argparse.Namespace) -> int:
    from memdoor.judging.programs import FailedGrading, grade_many
    from memdoor.problems.humaneval_x import excluded
    from memdoor.problems.languages import in_language
    from memdoor.problems.load import load_problems
    from memdoor.sandbox import SandboxConfig, open_sandbox

    problems = {p.id: p for p in in_language(load_problems(args.problems), args.language)}
    samples = read_samples(args.samples)
    left_out = excluded(args.problems)  # known-bad problems of the suite: reported, never graded
    if left_out:
        listed = "; ".join(f"{pid}: {why}" for pid, why in left_out.items())
        sys.stderr.write(
            f"memdoor grade: {args.problems} leaves out {len(left_out)} known-bad problems ({listed})\n"
        )
    missing = sorted({s.problem_id for s in samples} - set(problems) - set(left_out))
    if missing:
        raise UsageError(
            f"{args.samples}: {len(missing)} sample(s) name unknown problems, e.g. {missing[0]!r}"
        )
    workers = args.workers or os.cpu_count() or 1
    sandbox = open_sandbox(
        SandboxConfig(
            isolation=args.isolation, timeout_s=args.timeout, memory_mb=args.memory_mb, workers=workers
        )
    )
    graded = [s for s in samples if s.problem_id not in left_out]
    jobs = [(problems[s.problem_id], s.code) for s in graded]
    verdicts = grade_many(jobs, sandbox, workers=workers, stop_at_first_failure=not args.all_tests)
    out = sys.stdout
    passed = failed = 0
    if not args.json:
        out.write(f"{'#':>4}  {'problem':<28} {'verdict':<14} {'tests':>9} {'seconds':>8}\n")
    for s in samples:
        if s.problem_id in left_out:
            _excluded_row(out, s, left_out[s.problem_id], args.json)
            continue
        v = next(verdicts)
        passed += v.passed
        ran = sum(t.status != "skipped" for t in v.tests)
        error = v.error if isinstance(v, FailedGrading) else None  # Memdoor's own failure, not a verdict
        if error is not None:
            failed += 1
            sys.stderr.write(f"memdoor grade: sample {s.index} could not be graded: {error}\n")
        verdict = "error" if error is not None else v.status
        if args.json:
            row = {
                "problem_id": s.problem_id,
                "index": s.index,
                "passed": v.passed,
                "verdict": verdict,
                "tests_passed": v.tests_passed,
                "tests_total": v.tests_total,
                "seconds": round(v.seconds, 4),
            }
            detail = next((t.detail for t in v.tests if t.status != "passed" and t.detail), "")
            if detail and not v.passed:  # why it failed (and when the official grader would differ)
                row["detail"] = detail
            out.write(json.dumps(row | ({"error": error} if error is not None else {})) + "\n")
        else:
            out.write(
                f"{s.index:>4}  {s.problem_id[:28]:<28} {verdict:<14} "
                f"{v.tests_passed:>4}/{v.tests_total:<4} {v.seconds:>8.2f}   (ran {ran})\n"
            )
        out.flush()
    if not args.json:
        skipped = len(samples) - len(graded)
        note = f" ({skipped} on excluded known-bad problems, not graded)" if skipped else ""
        out.write(f"{passed}/{len(graded)} samples passed{note} · isolation: {sandbox.name}\n")
    return 1 if failed else 0  # every verdict is written; exit 1 says some samples have none


def _excluded_row(out, s: Sample, why: str, as_json: bool) -> None:
    """A sample of a problem the suite leaves out (its canonical solution cannot pass): said, not graded."""
    if as_json:
        row = {
            "problem_id": s.problem_id,
            "index": s.index,
            "passed": False,
            "verdict": "excluded",
            "detail": why,
        }
        out.write(json.dumps(row) + "\n")
    else:
        out.write(f"{s.index:>4}  {s.problem_id[:28]:<28} {'excluded':<14} {'':>9} {'':>8}   ({why})\n")
