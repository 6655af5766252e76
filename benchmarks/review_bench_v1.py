"""The first review benchmark (issue 15 item 5; its successor is review_bench.py, issue 43): builds the cases and runs `memdoor review` rows on them.

Cases come from the dev problems' reference solutions (never shown to a solving team; here they are
the code under review):

- **bug**: one line of the reference solution mutated (a comparison flipped, an off-by-one, min/max,
  and/or swapped), kept only when the mutant fails the hidden tests in the real sandbox;
- **refactor**: a local variable renamed throughout, kept only when it passes every test.

Each case is a temporary git repository holding ``solution.py`` (the reference), the public tests and
``check_public.py`` (the repository's test command runs the public tests only: hidden tests never
reach the agents); the case's diff turns the reference into the mutant or the refactoring. A row is a
team (``--row N@SPEC[,SPEC...]``: N agents, models round-robin). Per case and row it records: for a
bug, whether a consensus finding is in solution.py within 3 lines of the mutated line (detection at
the right place) and whether any agent's finding (consensus or minority) is there; for a refactor, whether any consensus finding is medium or worse (a false alarm);
whether the consensus patch passes every test (graded on public + hidden tests by the sandbox, not by
the test command); tokens, calls, compute and seconds; and how many agents' answers had no readable
JSON at first and after the follow-up asking for it. The summary gives each rate with a Wilson 95% interval.

With ``--out`` every (row, case) result is appended as one JSON line when it is done, and a run
with the same ``--out`` skips what is already there (a run killed at any point loses at most the case
in progress and never counts one twice); ``--summary-only`` prints the table of an ``--out`` file;
``--backfill`` adds to older results the fields later runs record, read from their kept traces.
Each review's trace is kept beside it (``traces/``: ``memdoor trace ID --dir DIR/traces``).

  .venv/bin/python benchmarks/review_bench_v1.py --dry-run --limit 5
  .venv/bin/python benchmarks/review_bench_v1.py --limit 20 --out /tmp/review-bench.jsonl \\
      --row 1@local:qwen2.5-coder-1.5b --row 5@local:qwen2.5-coder-0.5b \\
      --row 4@local:qwen2.5-coder-0.5b,local:qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from memdoor.bench.stats import wilson_ci
from memdoor.core.problem import Problem
from memdoor.judging.programs import grade
from memdoor.problems.load import load_problems
from memdoor.review.consensus import quorum
from memdoor.review.findings import severity_rank
from memdoor.sandbox import SandboxConfig, open_sandbox

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NEAR = 3


def near(line: int | None, start: int, end: int) -> bool:
    """A finding on lines ``start``–``end`` is at the mutated ``line`` (within NEAR lines)."""
    return line is not None and start - NEAR <= line <= end + NEAR


def alarming(severity: str) -> bool:
    """A finding this severe on a correct refactoring is a false alarm."""
    return severity_rank(severity) >= severity_rank("medium")


MUTATIONS: list[tuple[str, str, str]] = [
    ("<= to <", r"<=", "<"),
    ("< to <=", r"<(?![=<])", "<="),
    (">= to >", r">=", ">"),
    ("> to >=", r"(?<![-=>])>(?![=>])", ">="),
    ("+ 1 dropped", r" \+ 1\b", ""),
    ("- 1 dropped", r" - 1\b", ""),
    ("min to max", r"\bmin\(", "max("),
    ("max to min", r"\bmax\(", "min("),
    ("and to or", r" and ", " or "),
]
"""(description, pattern, replacement): each applied to one line at a time, first match only."""

CHECK_PUBLIC = '''"""The repository's tests: the public examples of the problem (hidden tests are not here)."""
import json
import sys
from typing import *  # noqa: F403  (LiveCodeBench's prelude gives these names)
import collections, heapq, bisect, math, itertools, functools  # noqa: E401

sys.setrecursionlimit(50000)
source = open("solution.py").read()
space = {name: getattr(sys.modules["typing"], name) for name in dir(sys.modules["typing"])}
space.update(collections=collections, heapq=heapq, bisect=bisect, math=math, itertools=itertools,
             functools=functools, inf=math.inf)
exec(compile(source, "solution.py", "exec"), space)
func = getattr(space["Solution"](), FUNC)
failed = 0
for i, case in enumerate(json.load(open("public_tests.json"))):
    args = [json.loads(line) for line in case["input"].splitlines() if line.strip()]
    got = func(*args)
    if isinstance(got, tuple):
        got = list(got)
    if got != json.loads(case["output"]):
        failed += 1
        print(f"test {i}: expected {case['output']}, got {got!r}")
print(f"{failed} of public tests failed" if failed else "all public tests passed")
sys.exit(1 if failed else 0)
'''


class Case(BaseModel):
    problem_id: str
    kind: str  # bug | refactor
    what: str
    before: str
    after: str
    line: int | None = None  # the mutated line (bug cases)


def mutants(code: str) -> Iterator[tuple[str, str, int]]:
    """(description, mutant, line number) for one-line mutations of ``code``, in line order."""
    lines = code.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("def ", "class ", "#", "@")):
            continue
        for what, pattern, repl in MUTATIONS:
            new, n = re.subn(pattern, repl, line, count=1)
            if n and new != line:
                mutant = "\n".join([*lines[:i], new, *lines[i + 1 :]])
                try:
                    compile(mutant, "solution.py", "exec")
                except SyntaxError:
                    continue
                yield what, mutant, i + 1


def renamed(code: str) -> tuple[str, str] | None:
    """The code with its first assigned local variable renamed (a correct refactoring), or None."""
    m = re.search(r"^\s+([a-z_][a-z0-9_]*)\s*=[^=]", code, re.M)
    if m is None:
        return None
    old = m.group(1)
    new = f"{old}_value"
    if re.search(rf"\b{new}\b", code):
        return None
    return f"rename {old} to {new}", re.sub(rf"\b{old}\b", new, code)


def build_cases(problems: list[Problem], refs: dict[str, str], sandbox, limit: int) -> list[Case]:
    """One bug case (the first mutant that fails the hidden tests) and one refactor case per problem."""
    cases: list[Case] = []
    for p in problems:
        ref = refs.get(p.id)
        if ref is None or not grade(p, ref, sandbox).passed:
            continue
        for what, mutant, line in mutants(ref):
            if not grade(p, mutant, sandbox).passed:
                cases.append(
                    Case(problem_id=p.id, kind="bug", what=what, before=ref, after=mutant, line=line)
                )
                break
        r = renamed(ref)
        if r is not None and grade(p, r[1], sandbox).passed:
            cases.append(Case(problem_id=p.id, kind="refactor", what=r[0], before=ref, after=r[1]))
        if len({c.problem_id for c in cases}) >= limit:
            break
    return cases


def make_repo(root: Path, case: Case, problem: Problem) -> str:
    """A git repository holding the reference solution and its public tests; returns the case's diff."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout

    root.mkdir(parents=True)
    git("init", "-q")
    git("config", "user.email", "bench@memdoor")
    git("config", "user.name", "bench")
    (root / "solution.py").write_text(case.before)
    (root / "check_public.py").write_text(CHECK_PUBLIC.replace("FUNC", repr(problem.func_name)))
    tests = [{"input": t.input, "output": t.output} for t in problem.public_tests]
    (root / "public_tests.json").write_text(json.dumps(tests))
    git("add", ".")
    git("commit", "-qm", "reference")
    (root / "solution.py").write_text(case.after)
    diff = git("diff")
    (root / "solution.py").write_text(case.before)
    return diff


async def review_case(case: Case, problem: Problem, agents: int, models: list[str], env) -> dict:
    """Run one review of ``case`` by a team and score it (``env``: one RunEnv for the whole run)."""
    from memdoor.review.session import ReviewConfig, prepare, run_review

    sandbox = env.sandbox
    config = ReviewConfig(agents=agents, models=models, test="python3 check_public.py", fail_on="never")
    with tempfile.TemporaryDirectory(prefix="memdoor-review-bench-") as tmp:
        os.chmod(tmp, 0o711)  # the test command's sandbox uid must reach the copies
        diff = make_repo(Path(tmp) / "repo", case, problem)
        work = Path(tmp) / "work"
        work.mkdir()
        prepared = prepare(diff, Path(tmp) / "repo", config, work)
        report = await run_review(prepared, config, env)
        patched_ok = None
        if report.patch is not None and report.patch.diff:
            patched = (work / "patched" / "solution.py").read_text()
            patched_ok = grade(problem, patched, sandbox).passed

    def at_place(groups) -> bool:
        return any(g.file == "solution.py" and near(case.line, g.line, g.end_line) for g in groups)

    hit = at_place(report.findings)
    alarm = any(alarming(g.severity) for g in report.findings)
    t = report.ledger.totals()
    return {
        "problem_id": case.problem_id, "kind": case.kind, "what": case.what, "agents": agents,
        "models": models, "detected": hit if case.kind == "bug" else None,
        "false_alarm": alarm if case.kind == "refactor" else None, "patch_passes": patched_ok,
        "public_tests_fail": report.tests is not None and not report.tests.passed,
        "findings": len(report.findings), "minority": len(report.minority), "tokens": t.tokens,
        "calls": t.calls, "compute": t.compute, "seconds": round(t.wall_seconds, 3),
        "error": report.error, "trace_id": report.trace_id, "line": case.line,
        "any_agent_at_place": at_place([*report.findings, *report.minority]) if case.kind == "bug" else None,
        "answers": agents * len(prepared.parts),
        "unreadable_first": sum(1 for c in report.ledger.calls if c.role == "review-format"),
        "unreadable_final": sum(1 for u in report.unusable if u.reason == "unreadable"),
        "groups": [  # every finding group, compact: any quorum can be re-scored from the results alone
            {"file": g.file, "line": g.line, "end_line": g.end_line, "severity": g.severity, "agents": g.agents}
            for g in [*report.findings, *report.minority]
        ],
    }  # fmt: skip


def team_label(agents: int, models: str) -> str:
    """A team as a reader says it: "5 × qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b + 4 × qwen2.5-coder-0.5b"."""
    specs = models.split(",")
    names = [specs[i % len(specs)].split(":", 1)[-1] for i in range(agents)]
    runs: list[list] = []
    for n in names:
        if runs and runs[-1][0] == n:
            runs[-1][1] += 1
        else:
            runs.append([n, 1])
    return " + ".join(n if k == 1 else f"{k} × {n}" for n, k in runs)


def answer_stats(rows: list[dict], traces: Path | None) -> str:
    """Per team, from the kept traces: agents' answers, how many had no readable JSON at first, and how
    many were still unusable after the follow-up asking for the block (ReviewConfig.format_retries)."""
    if not any("unreadable_first" in r for r in rows) and (traces is None or not traces.is_dir()):
        return ""
    out = ["| team | reviews by an agent | no readable JSON at first | still none after the follow-up |",
           "|---|---|---|---|"]  # fmt: skip
    for agents, models in sorted({(r["agents"], ",".join(r["models"])) for r in rows}):
        first = unread = final = 0
        for r in rows:
            if (r["agents"], ",".join(r["models"])) != (agents, models):
                continue
            if "unreadable_first" in r:  # recorded with the result (older results: read from the trace)
                first, unread, final = (
                    first + r["answers"],
                    unread + r["unreadable_first"],
                    final + r["unreadable_final"],
                )
                continue
            path = traces / f"{r['trace_id']}.json"
            if not path.exists():
                continue
            events = json.loads(path.read_text())["trace"]["events"]
            last: dict[str, dict] = {}
            for e in events:
                if e["kind"] == "review":
                    if e["data"].get("round", 0) == 0:
                        first += 1
                        unread += bool(e["data"].get("error"))
                    last[e["agent"]] = e["data"]
            final += sum(bool(d.get("error")) for d in last.values())
        out.append(f"| {team_label(agents, models)} | {first} | {unread} | {final} |")
    return "\n".join(out)


def summary(rows: list[dict]) -> str:
    """A Markdown table per team: each rate with its Wilson 95% interval, and mean cost."""
    out = [
        "| team | bug detected at the place | of which the public tests miss | some agent at the place "
        "| false alarms on refactorings | consensus patch passes all tests | tokens/case | TFLOP/case | s/case "
        "| errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    teams = sorted({(r["agents"], ",".join(r["models"])) for r in rows})

    def rate(values: list[bool]) -> str:
        if not values:
            return "-"
        lo, hi = wilson_ci(sum(values), len(values))
        return f"{sum(values)}/{len(values)} [{lo:.2f}, {hi:.2f}]"

    for agents, models in teams:
        mine = [r for r in rows if (r["agents"], ",".join(r["models"])) == (agents, models)]
        bugs = [r["detected"] for r in mine if r["kind"] == "bug"]
        quiet = [r["detected"] for r in mine if r["kind"] == "bug" and not r.get("public_tests_fail")]
        anyone = [r["any_agent_at_place"] for r in mine if r.get("any_agent_at_place") is not None]
        alarms = [r["false_alarm"] for r in mine if r["kind"] == "refactor"]
        patches = [r["patch_passes"] for r in mine if r["patch_passes"] is not None]
        tokens = sum(r["tokens"] for r in mine) / len(mine)
        secs = sum(r["seconds"] for r in mine) / len(mine)
        known = [r["compute"] for r in mine if r.get("compute") is not None]
        tflop = f"{sum(known) / len(known) / 1e12:.2f}" if len(known) == len(mine) else "-"
        errors = sum(1 for r in mine if r["error"])
        out.append(
            f"| {team_label(agents, models)} | {rate(bugs)} | {rate(quiet)} | {rate(anyone)} | {rate(alarms)} | {rate(patches)} | {tokens:.0f} "
            f"| {tflop} | {secs:.1f} | {errors} |"
        )
    return "\n".join(out)


def by_quorum(rows: list[dict]) -> str:
    """What other consensus rules would have reported, re-scored from the recorded finding groups: per
    team and quorum k (a group counts when at least k agents raised it; the team's rule is ⌈N/2⌉), bugs
    found at the place and false alarms on refactorings; and per model of a mixed team, what its agents
    raised on their own (any group one of them is in). Only results that recorded their groups count."""
    out = ["| team | who counts | bugs at the place | false alarms on refactorings |", "|---|---|---|---|"]
    for agents, models in sorted({(r["agents"], ",".join(r["models"])) for r in rows}):
        mine = [r for r in rows if (r["agents"], ",".join(r["models"])) == (agents, models) and "groups" in r]
        if not mine:
            continue
        team = models.split(",")
        model_of = {f"agent{i}": team[i % len(team)] for i in range(agents)}
        rules = [(f"{k} of {agents}" + (" (the rule)" if k == quorum(agents) else ""), k, None)
                 for k in range(1, agents + 1)]  # fmt: skip
        if len(set(team)) > 1:
            rules += [(f"any {m.split(':')[-1]} agent", 1, m) for m in dict.fromkeys(team)]
        for label, k, model in rules:

            def counts(g: dict, k=k, model=model, model_of=model_of) -> bool:
                raised = [a for a in g["agents"] if model is None or model_of[a] == model]
                return len(raised) >= k

            hits = [
                any(counts(g) and g["file"] == "solution.py" and near(r["line"], g["line"], g["end_line"])
                    for g in r["groups"])
                for r in mine if r["kind"] == "bug"
            ]  # fmt: skip
            alarms = [
                any(counts(g) and alarming(g["severity"]) for g in r["groups"]) for r in mine if r["kind"] == "refactor"
            ]  # fmt: skip
            out.append(f"| {team_label(agents, models)} | {label} | {sum(hits)}/{len(hits)} | {sum(alarms)}/{len(alarms)} |")  # fmt: skip
    return "\n".join(out)


async def run_rows(cases: list[Case], by_id: dict[str, Problem], rows: list[str], sandbox, out: Path | None):
    """Every case under every row, one environment (models loaded once); each result appended to ``out``."""
    from memdoor.run.env import open_env

    results = load_rows(out) if out else []
    done = {_key(r["agents"], r["models"], r["problem_id"], r["kind"]) for r in results}
    if done:
        print(f"{len(done)} results already in {out}: skipped")
    traces = out.parent / "traces" if out else None  # every review readable: memdoor trace ID --dir DIR
    async with open_env(sandbox=sandbox, trace_dir=traces) as env:
        for c in cases:  # case by case, every row: a run stopped early still compares rows on the same cases
            for agents, models in map(parse_row, rows):
                if _key(agents, models, c.problem_id, c.kind) in done:
                    continue
                row = await review_case(c, by_id[c.problem_id], agents, models, env)
                print(f"  {agents}@{','.join(models)} {c.problem_id} {c.kind}: detected={row['detected']} "
                      f"false_alarm={row['false_alarm']} patch={row['patch_passes']} {row['seconds']:.0f} s",
                      flush=True)  # fmt: skip
                results.append(row)
                if out:
                    with out.open("a") as f:
                        f.write(json.dumps(row) + "\n")
    return results


def backfill(rows: list[dict], cases: list[Case], traces: Path) -> int:
    """Add the fields later runs record (line, any_agent_at_place, answers, unreadable_*) to older results,
    from their kept traces: every agent's last readable answer re-read for its findings. How many changed."""
    from memdoor.review.findings import parse_review

    line_of = {(c.problem_id, c.kind): c.line for c in cases}
    changed = 0
    for r in rows:
        path = traces / f"{r['trace_id']}.json"
        if "answers" in r or not path.exists():
            continue
        last: dict[str, dict] = {}
        first = unread = 0
        for e in json.loads(path.read_text())["trace"]["events"]:
            if e["kind"] == "review":
                if e["data"].get("round", 0) == 0:
                    first, unread = first + 1, unread + bool(e["data"].get("error"))
                last[e["agent"]] = e["data"]
        line = line_of.get((r["problem_id"], r["kind"]))
        found = [
            f for d in last.values() if not d.get("error")
            for f in parse_review(d.get("text") or "", agent="", part="solution.py").findings
        ]  # fmt: skip
        hit = any(near(line, f.line, f.end_line) for f in found)
        r.update(
            line=line, any_agent_at_place=hit if r["kind"] == "bug" else None, answers=first,
            unreadable_first=unread, unreadable_final=sum(bool(d.get("error")) for d in last.values()),
        )  # fmt: skip
        changed += 1
    return changed


def _key(agents: int, models: list[str], problem_id: str, kind: str) -> tuple:
    return agents, tuple(models), problem_id, kind


def load_rows(path: Path) -> list[dict]:
    """The results of an ``--out`` file; a last line cut short by a kill is dropped (and redone)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    text = path.read_text()
    if text and not text.endswith("\n"):  # rewrite without the torn line, so appends start clean
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def parse_row(text: str) -> tuple[int, list[str]]:
    n, _, specs = text.partition("@")
    return int(n), [s for s in specs.split(",") if s]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default=str(DATA / "leetcode_2024_dev.jsonl"))
    ap.add_argument("--refs", default=str(DATA / "reference_solutions_dev.jsonl"))
    ap.add_argument("--limit", type=int, default=5, help="problems (each gives a bug and a refactor case)")
    ap.add_argument("--row", action="append", default=[], metavar="N@SPEC[,SPEC]")
    ap.add_argument("--out", type=Path, help="JSON Lines of per-case results")
    ap.add_argument("--dry-run", action="store_true", help="build and print the cases only (no model)")
    ap.add_argument("--summary-only", action="store_true", help="print the table of the --out file and stop")
    ap.add_argument(
        "--backfill",
        action="store_true",
        help="add fields newer runs record to --out's results, from the traces",
    )
    args = ap.parse_args()
    if args.summary_only:
        rows = load_rows(args.out)
        print(summary(rows))
        print()
        print(answer_stats(rows, args.out.parent / "traces"))
        print()
        print(by_quorum(rows))
        return
    problems = load_problems(args.suite)
    refs = {}
    for line in Path(args.refs).read_text().splitlines():
        rec = json.loads(line)
        refs[rec["question_id"]] = rec["reference_solution"]
    started = time.monotonic()
    with open_sandbox(SandboxConfig()) as sandbox:
        cases = build_cases(problems, refs, sandbox, args.limit)
        print(f"{len(cases)} cases from {len({c.problem_id for c in cases})} problems "
              f"in {time.monotonic() - started:.1f} s")  # fmt: skip
        for c in cases:
            print(f"  {c.problem_id} {c.kind}: {c.what}" + (f" (line {c.line})" if c.line else ""))
        if args.backfill:
            rows = load_rows(args.out)
            n = backfill(rows, cases, args.out.parent / "traces")
            args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
            print(f"backfilled {n} results of {args.out}")
            return
        if args.dry_run or not args.row:
            return
        rows = asyncio.run(run_rows(cases, {p.id: p for p in problems}, args.row, sandbox, args.out))
        print(summary(rows))
        if args.out:
            print()
            print(answer_stats(rows, args.out.parent / "traces"))
            print()
            print(by_quorum(rows))


if __name__ == "__main__":
    main()
