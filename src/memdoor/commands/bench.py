"""Run strategies over a suite of problems and store every result the moment it finishes.

Examples:
  memdoor bench humaneval --strategies single,parallel:5,sequential:5 \\
      --model local:qwen2.5-coder-0.5b --baseline single@local:qwen2.5-coder-1.5b --out runs/he
  memdoor bench ../shared/data/leetcode_2024_dev.jsonl --difficulty easy --limit 20 \\
      --strategies single,hybrid:5 --model openai:qwen@http://127.0.0.1:8000/v1 --concurrency 8 --out runs/lc

A --strategies entry may name its own team: parallel:5@local:qwen2.5-coder-0.5b,
single@local:qwen2.5-coder-1.5b, or a mixed team with one count per model (agent i gets the i-th model;
the counts add up to the team size): parallel:5@local:qwen2.5-coder-1.5b*1+local:qwen2.5-coder-0.5b*4.
--model serves the entries that name none. An entry ending in #LANG+LANG... is a mixed-language team on
standard-input problems (agent i writes in the i-th language, round-robin: parallel:3#python+javascript+rust);
its candidates vote by behaviour on the same inputs. The bigger model alone spending more compute is a row like
any other, in the same paired bench as the teams: parallel:3@local:qwen2.5-coder-1.5b (three draws and the
vote), hybrid:3[repairer=strong,repair_prompt=explain]@local:qwen2.5-coder-1.5b (repairing its own draft),
adaptive:5@local:qwen2.5-coder-1.5b; their first agent is single@local:qwen2.5-coder-1.5b's, so its draft
replays. memdoor report compares every team with the best such single-model row at no more compute. Options in brackets after the strategy make a variant
row (the rest keep their defaults): sstar:16[repair_rounds=0] (memdoor solve --help lists the options). Agent i has the same model, temperature, seed and prompt in
every row, and an identical request is computed once per run and replayed to every row that makes it
(paired draws; each row is still charged it in full, and a replay takes the call's recorded latency
so seconds stay comparable: --concurrency 2 or more gives the freed engine to other pairs).
--budget-compute gives every row the same compute (FLOPs ≈ 2 × parameters × tokens; parameters from
the catalog, or --params SPEC=N for other models).

Problems run in the suite's file order (HumanEval/0, /1, ... for humaneval); filters are inclusive
and --limit keeps the first N after filtering. Rerunning the same command resumes: finished pairs
are skipped, pairs that were running when the run died are redone, pairs where every model call
failed (an endpoint down) are retried up to 3 attempts in all, other errors are kept and counted as
failures (--retry-errors retries them). The same command with rows added extends the run (the new
rows replay the stored model calls, so a new strategy is judged on the very drafts the others had);
rows may also be left out (only those named run). Each row records its settings and its revision (its
strategy's, the shared strategy code's and the selector's revision numbers and a digest of the prompts:
docs/benchmarks.md); a row whose settings changed is refused (--redo ROW makes it again), and so is one whose
revision changed unless --accept-revision ROW keeps its results knowingly; a row stored before revisions
were recorded resumes and records its revision from then on. A directory holding another configuration is refused;
a new directory may replay the calls of one that is (--calls-from OLD: same model, messages and settings
give the same response, so a run remade after the problems' loader changed pays only for new requests).
DIR holds results.sqlite (every result, config and versions, every computed model call) and
traces/ (one trace per result: memdoor trace ID --dir DIR/traces), and the portable files run.json,
results.jsonl and calls.jsonl (sorted text to commit, e.g. under benchmarks/results/; the same command
on a directory holding only them rebuilds the database and resumes); a password or key in a model spec's URL
is kept in memory only (DIR, the row names and the report show it as ***). Then: memdoor report DIR;
memdoor export DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from memdoor.bench import portable
from memdoor.bench.config import (
    BenchConfig,
    ProblemFilter,
    hide_secrets,
    parse_date,
    parse_difficulty,
    parse_params,
    parse_rows,
    shown_name,
    split_entries,
)
from memdoor.bench.loop import BenchOptions, run_bench
from memdoor.bench.progress import make_progress
from memdoor.bench.records import ProblemInfo
from memdoor.bench.resume import check_compatible
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import new_run, select_problems
from memdoor.commands.options import (
    FLOPS,
    MAX_TOKENS_PER_CALL,
    POSITIVE,
    SEED,
    TOKENS,
    at_least,
)
from memdoor.core.errors import UsageError
from memdoor.core.limits import check_team_size
from memdoor.core.messages import ModelResponse
from memdoor.core.net import redact_url
from memdoor.models.catalog import parameters_of

TRACES = "traces"
"""Folder of the results directory holding one trace file per (problem, row): ``memdoor trace ID --dir DIR/traces``."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "suite", metavar="SUITE", help="LiveCodeBench jsonl file, 'humaneval', or a problem file/folder"
    )
    parser.add_argument(
        "--strategies",
        required=True,
        metavar="LIST",
        help="comma-separated, e.g. single,parallel:5,sequential:5; an entry may name its team: "
        "parallel:5@MODEL or parallel:5@MODEL_A*1+MODEL_B*4, and set strategy options: "
        "sstar:16[repair_rounds=0,inputs=3]",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="SPEC",
        help="model spec for the team (repeat to mix models)",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="STRATEGY@SPEC",
        help="a comparison row with another model, e.g. single@local:qwen2.5-coder-1.5b (repeatable)",
    )
    parser.add_argument("--difficulty", metavar="LIST", help="keep these difficulties, e.g. easy,medium")
    parser.add_argument(
        "--since", metavar="DATE", help="keep problems released on or after DATE (YYYY-MM-DD)"
    )
    parser.add_argument(
        "--until", metavar="DATE", help="keep problems released on or before DATE (YYYY-MM-DD)"
    )
    parser.add_argument(
        "--limit", type=POSITIVE, metavar="N", help="keep the first N problems after filtering"
    )
    parser.add_argument(
        "--budget-tokens", type=TOKENS, metavar="T", help="the same token budget per problem for every row"
    )
    parser.add_argument(
        "--budget-compute",
        type=FLOPS,
        metavar="FLOPS",
        help="the same compute budget per problem for every row, e.g. 5e12 (FLOPs ≈ 2 × parameters × tokens)",
    )
    parser.add_argument(
        "--params",
        action="append",
        default=[],
        metavar="SPEC=N",
        help="parameter count of a model the catalog does not know, e.g. openai:qwen@http://h/v1=7e9 (repeatable)",
    )
    parser.add_argument("--seed", type=SEED, default=0, help="base sampling seed (default 0)")
    parser.add_argument(
        "--max-tokens",
        type=MAX_TOKENS_PER_CALL,
        default=1024,
        help="completion token cap per call, at least 16 (default 1024)",
    )
    parser.add_argument(
        "--concurrency",
        type=at_least(1, 1024),
        default=1,
        metavar="K",
        help="(problem, row) pairs solved at once, 1 to 1024 (default 1)",
    )
    parser.add_argument(
        "--retry-errors", action="store_true", help="also retry stored non-environmental errors"
    )
    parser.add_argument(
        "--redo",
        metavar="ROWS",
        default="",
        help="comma-separated row names (as in the report) whose stored results are dropped and made "
        "again, e.g. after a strategy's defaults changed",
    )
    parser.add_argument(
        "--accept-revision",
        metavar="ROWS",
        default="",
        help="comma-separated row names that may resume although their revision (strategy code, prompts, "
        "selector: memdoor.bench.revision) changed since their stored results were made: the results are "
        "kept and the new revision recorded, knowingly mixing the two in one row (--redo makes them again)",
    )
    parser.add_argument(
        "--calls-from",
        metavar="DIR",
        action="append",
        default=[],
        help="replay the model calls another results directory computed (its calls.jsonl) wherever this "
        "run makes the very same request, e.g. a run over the same problems before their loader changed; "
        "each call adopted is kept in this run's store (repeatable: the first directory holding a request "
        "gives it)",
    )
    parser.add_argument(
        "--no-pace",
        action="store_true",
        help="a replayed call returns at once instead of taking its recorded latency: a rerun over stored "
        "calls finishes sooner, but rows' wall seconds then leave out the replayed calls (compute and "
        "engine seconds are charged in full either way)",
    )
    parser.add_argument(
        "--max-errors",
        type=POSITIVE,
        default=10,
        metavar="N",
        help="stop after N environmental errors in a row (default 10)",
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="results directory (created; resumed if it exists)"
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="distributed team: model calls go to `memdoor worker` processes on this Redis "
        "(see docs/distributed.md)",
    )


def donor_calls(directories: Sequence[str]) -> dict[str, tuple[str, ModelResponse]]:
    """The calls other results directories kept (``--calls-from``, the first holding a key gives it);
    UsageError when one has none."""
    calls: dict[str, tuple[str, ModelResponse]] = {}
    for directory in directories:
        found = portable.read_calls(Path(directory))
        if not found:
            raise UsageError(f"--calls-from {directory}: no {portable.CALLS_JSONL} with calls there")
        calls = found | calls
    return calls


def redo_rows(args: argparse.Namespace, raw_of: Mapping[str, str] | None = None) -> list[str]:
    """The row names given with --redo (as the report shows them; a raw spec in one is shown as the
    row's name is: ``raw_of`` from :func:`memdoor.bench.config.hide_secrets`)."""
    return [shown_name(n, raw_of or {}) for n in split_entries(args.redo) if n]


def accepted_rows(args: argparse.Namespace, raw_of: Mapping[str, str] | None = None) -> list[str]:
    """The row names given with --accept-revision (shown as :func:`redo_rows`'s are)."""
    return [shown_name(n, raw_of or {}) for n in split_entries(getattr(args, "accept_revision", "")) if n]


def build_config(args: argparse.Namespace) -> BenchConfig:
    """Validate the flags argparse cannot check alone (no file touched) into a BenchConfig (its model
    specs shown without their secrets: see :func:`build_run`)."""
    return build_run(args)[0]


def build_run(args: argparse.Namespace) -> tuple[BenchConfig, dict[str, str]]:
    """The BenchConfig of the flags, as the results directory records it (every model spec shown by
    :func:`memdoor.core.net.redact_spec`), and the raw spec of each spec shown otherwise (kept in memory
    only, to open the models: :func:`memdoor.bench.config.hide_secrets`)."""
    from memdoor.run.config import StrategySpec

    rows = parse_rows(args.strategies, args.model, args.baseline)
    for row in rows:
        check_team_size(StrategySpec.parse(row.strategy).agents, row.strategy)
    shown, raw_of = hide_secrets(BenchConfig(suite=args.suite, rows=rows, params=parse_params(args.params)))
    rows, params = shown.rows, shown.params
    if args.budget_compute is not None:
        unknown = sorted({m for row in rows for m in row.models if parameters_of(m, params) is None})
        if unknown:
            raise UsageError(
                f"--budget-compute needs the size of {', '.join(unknown)}: give --params SPEC=N (e.g. =7e9)"
            )
    filters = ProblemFilter(
        difficulty=parse_difficulty(args.difficulty),
        since=parse_date("--since", args.since),
        until=parse_date("--until", args.until),
        limit=args.limit,
    )
    for flag, names in (
        ("--redo", redo_rows(args, raw_of)),
        ("--accept-revision", accepted_rows(args, raw_of)),
    ):
        unknown = [n for n in names if n not in {r.name for r in rows}]
        if unknown:
            raise UsageError(
                f"{flag} {unknown[0]}: not a row of this command (its rows: {', '.join(r.name for r in rows)})"
            )
    if filters.since and filters.until and filters.since > filters.until:
        raise UsageError(f"--since {filters.since} is after --until {filters.until}")
    config = BenchConfig(
        suite=args.suite,
        rows=rows,
        filters=filters,
        budget_tokens=args.budget_tokens,
        budget_compute=args.budget_compute,
        params=params,
        seed=args.seed,
        max_tokens=args.max_tokens,
    )
    return config, raw_of


def shown_argv(argv: Sequence[str], args: argparse.Namespace, raw_of: Mapping[str, str]) -> list[str]:
    """The command line as the results directory records it: each raw model spec shown as the config
    shows it, and the --redis URL without its password."""
    hidden = dict(raw_of)
    redis = getattr(args, "redis", None)
    if redis and redact_url(redis) != redis:
        hidden[redact_url(redis)] = redis
    return [shown_name(a, hidden) for a in argv]


def run(args: argparse.Namespace) -> int:
    from memdoor.models.pool import ModelPool
    from memdoor.problems.humaneval_x import excluded
    from memdoor.problems.languages import check_mixable
    from memdoor.problems.load import load_problems

    config, raw_of = build_run(args)
    problems = select_problems(load_problems(args.suite), config.filters)
    if not problems:
        raise UsageError(f"no problems left in {args.suite} after the filters")
    for row in config.rows:  # a mixed-language row needs problems whose tests fit every language
        for p in problems:
            check_mixable(p, row.languages)
    left_out = excluded(args.suite)  # known-bad problems the suite leaves out: said, never silently
    if left_out:
        print(
            f"bench: {len(left_out)} known-bad problems of {args.suite} excluded: "
            + "; ".join(f"{pid} ({why})" for pid, why in sorted(left_out.items())),
            file=sys.stderr,
        )
    # Everything below may refuse the run; nothing in --out is touched until the store opens.
    stored = ResultsStore.inspect(args.out)
    specs = [raw_of.get(s, s) for row in config.rows for s in row.models]  # the models open from raw specs
    if getattr(args, "redis", None):  # the agents' models are served by `memdoor worker` processes
        from memdoor.distributed.remote import RemoteConfig, RemoteRun
        from memdoor.distributed.signing import TeamKey

        # with MEMDOOR_TEAM_KEY(_FILE) set, only results the workers signed are taken
        remote = RemoteRun(RemoteConfig(url=args.redis), team_key=TeamKey.from_env())
        pool = remote.pool(specs)
    else:
        pool = ModelPool()
    for spec in specs:
        pool.get(spec)
    asyncio.run(_bench(args, config, problems, stored, pool, raw_of))
    return 0


async def _bench(args, config: BenchConfig, problems, stored, pool, raw_of: Mapping[str, str]) -> None:
    """The bench in one environment (its sandbox opened here and closed at the end, with ``pool``); ``raw_of``
    gives the raw spec of each spec ``config`` shows without its secrets."""
    from memdoor.memory import open_memory
    from memdoor.run.env import RunEnv, open_env

    traces = Path(args.out) / TRACES
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(pool.aclose)
        env = await stack.enter_async_context(
            open_env(pool=pool, trace_dir=traces, slots=os.cpu_count() or 1)
        )
        run_record = new_run(config, problems, env.sandbox.name)
        redo, accept = redo_rows(args, raw_of), accepted_rows(args, raw_of)
        if stored is not None:
            check_compatible(stored, run_record, args.out, redo=redo, accept=accept)
        infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
        options = BenchOptions(
            concurrency=args.concurrency,
            retry_errors=args.retry_errors,
            max_consecutive_errors=args.max_errors,
            calls_from=donor_calls(args.calls_from) if args.calls_from else None,
            pace_replays=not args.no_pace,
            raw_specs=raw_of,
        )

        def make_env() -> RunEnv:
            # A fresh in-process team memory per pair (the loop closes it); the rest is shared. The runner
            # writes the trace file into DIR/traces.
            return dataclasses.replace(env, memory=open_memory(None))

        with ResultsStore.create_or_resume(
            args.out, run_record, infos, argv=shown_argv(sys.argv, args, raw_of), redo=redo, accept=accept
        ) as store:
            if redo:
                print(
                    f"bench: --redo {', '.join(redo)}: {store.dropped} stored results dropped",
                    file=sys.stderr,
                )
            outcome = await run_bench(
                problems, config, store, make_env, options=options, progress=make_progress()
            )
    print(
        f"bench: {outcome.ran} run ({outcome.errors} errors), {outcome.skipped} already stored; "
        f"results in {args.out} — see: memdoor report {args.out}"
    )
