"""Grade every HumanEval-X canonical solution (JavaScript or Rust) in the sandbox, known-bad problems
included, and print which fail and the throughput.

    .venv/bin/python benchmarks/humaneval_x_canonical.py javascript [--workers 2] [--limit N]
    .venv/bin/python benchmarks/humaneval_x_canonical.py rust --limit 10
    .venv/bin/python benchmarks/humaneval_x_canonical.py javascript --answers 'benchmarks/results/humaneval-js*'

Every problem that fails should be in memdoor.problems.humaneval_x.KNOWN_BAD (and vice versa).

``--answers GLOB`` replays stored answers instead (the ``code`` of each results.jsonl row of the matching
results directories, and with ``--drafts`` every completion of their calls.jsonl, matched to the problem whose
function it defines): each check test (public and hidden) is run under HumanEval-X's official rule (the
program then the test in one file, exit status and output only) and under Memdoor's, and every test whose
pass/fail differs is listed with the reason (issue 41: Memdoor also requires the test to have run to its end).
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import time
from concurrent.futures import ThreadPoolExecutor

from memdoor.judging.programs import grade_many, program_for
from memdoor.problems.humaneval_x import KNOWN_BAD, data_file, load_humaneval_x
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang import javascript, rust
from memdoor.sandbox.lang.process import candidate_limits, limit_result, run_isolated
from memdoor.sandbox.lang.program import defines
from memdoor.sandbox.lang.run import usable_tool
from memdoor.text.extract import extract_code


def _stored_answers(language: str, pattern: str, drafts: bool, problems: dict) -> list[tuple[str, str]]:
    answers = set()
    for path in glob.glob(f"{pattern}/results.jsonl"):
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        for row in rows:
            if row.get("code") and row.get("problem_id") in problems:
                answers.add((row["problem_id"], row["code"]))
    for path in glob.glob(f"{pattern}/calls.jsonl") if drafts else []:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        for row in rows:
            for c in (row.get("response") or {}).get("completions", []):
                code = extract_code(c.get("text") or "")
                hits = [
                    pid for pid, p in problems.items() if p.func_name and defines(language, code, p.func_name)
                ]
                if len(hits) == 1 and code.strip():
                    answers.add((hits[0], code))
    return sorted(answers)


def _official(sb, language: str, tool, program: str, test: str) -> bool:
    """HumanEval-X's rule, in the sandbox: JavaScript ``node`` on program + test, passed iff it prints
    nothing; Rust: the test build of program + test, passed iff it builds and exits 0."""
    source = f"{program}\n{test}\n"
    if language == "javascript":
        files = [("main.js", source.encode("utf-8", "surrogatepass"), 0o644)]
        out = run_isolated(
            sb, [tool.path, "/tmp/main.js"], files, javascript.limits_for(sb), ro_paths=tool.ro_paths
        )
        return limit_result(out, sb.config) is None and not (out.stdout or out.stderr)
    binary = rust.build(sb, tool, source, test=True)
    if not isinstance(binary, bytes):
        return False
    out = run_isolated(
        sb, ["/tmp/bin"], [("bin", binary, 0o755)], candidate_limits(sb.config, address_space=True)
    )
    return limit_result(out, sb.config) is None and out.exit_code == 0


def replay(language: str, pattern: str, drafts: bool, workers: int) -> int:
    problems = {p.id: p for p in load_humaneval_x(language, keep_bad=True)}
    answers = _stored_answers(language, pattern, drafts, problems)
    tool = usable_tool(language)
    runner = javascript.run_check if language == "javascript" else rust.run_check

    def one(answer: tuple[str, str]) -> list[tuple[str, bool, object]]:
        pid, code = answer
        program = program_for(problems[pid], code)
        tests = [t for t in [*problems[pid].public_tests, *problems[pid].grading_tests] if t.kind == "check"]
        return [
            (pid, _official(sb, language, tool, program, t.input), runner(sb, tool, program, t.input))
            for t in tests
        ]

    changed: collections.Counter = collections.Counter()
    total = 0
    with open_sandbox(SandboxConfig(workers=workers)) as sb, ThreadPoolExecutor(workers) as pool:
        for results in pool.map(one, answers):
            for pid, theirs, ours in results:
                total += 1
                if theirs != (ours.status == "passed"):
                    changed[(theirs, ours.status)] += 1
                    print(
                        f"  {pid}: official {'passes' if theirs else 'fails'}, Memdoor {ours.status}: {ours.detail[:200]!r}"
                    )
    print(f"{language}: {len(answers)} stored answers, {total} check tests, {sum(changed.values())} differ "
          f"from the official rule: {dict(changed)}")  # fmt: skip
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("language", choices=["javascript", "rust"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="only the first N problems (0: all)")
    ap.add_argument("--answers", help="replay the stored answers of these results directories (a glob)")
    ap.add_argument(
        "--drafts", action="store_true", help="with --answers: every completion of calls.jsonl too"
    )
    args = ap.parse_args()
    if args.answers:
        return replay(args.language, args.answers, args.drafts, args.workers)
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
