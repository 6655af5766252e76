"""One agent alone against a team, side by side, on a few small problems (about two minutes on two cores).

Both rows solve the same problems with the same model; the team's first agent makes exactly the single
agent's request, so that draft is computed once and both rows are charged for it. Each answer is
graded on hidden tests in the sandbox. The table shows, per problem, whether each row's answer
passed, what it cost (tokens, compute, seconds) and what the team did (its calls by role, the vote);
the last line says plainly whether the team helped. Exit code 0 when Memdoor worked, whatever the
models scored; 1 when a run failed (a model or the sandbox broke); 2 for a usage error.

Examples:
  memdoor demo
  memdoor demo --team parallel:5 --model local:qwen2.5-coder-1.5b
  memdoor demo --problems examples/problems.yaml --out runs/demo     # keep the results: memdoor report runs/demo
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

from memdoor.commands.options import MAX_TOKENS_PER_CALL, SEED
from memdoor.core.limits import check_team_size


def configure(p: argparse.ArgumentParser) -> None:
    from memdoor.run.config import DEFAULT_MODEL

    p.add_argument(
        "--model", default=DEFAULT_MODEL, metavar="SPEC", help=f"model of both rows (default {DEFAULT_MODEL})"
    )
    p.add_argument("--team", default="hybrid:3", metavar="STRATEGY:N", help="the team row (default hybrid:3)")
    p.add_argument(
        "--problems", metavar="FILE", help="problem file (default: the demo problems shipped with memdoor)"
    )
    p.add_argument("--out", metavar="DIR", help="keep the results here (default: a temporary directory)")
    p.add_argument("--seed", type=SEED, default=0, help="base sampling seed (default 0)")
    p.add_argument(
        "--max-tokens", type=MAX_TOKENS_PER_CALL, default=512, help="completion cap per call (default 512)"
    )
    p.add_argument("--json", action="store_true", help="print the outcomes as JSON")


def run(args: argparse.Namespace) -> int:
    from memdoor.bench.config import hide_secrets
    from memdoor.bench.demo import demo_config, demo_problems_path
    from memdoor.problems.load import load_problems
    from memdoor.run.config import StrategySpec

    suite = args.problems or str(demo_problems_path())
    # the results record the model's spec without its secrets; the raw spec stays here, to open the model
    config, raw_of = hide_secrets(
        demo_config(suite, args.model, args.team, seed=args.seed, max_tokens=args.max_tokens)
    )
    team = config.rows[1]
    check_team_size(StrategySpec.parse(team.strategy).agents, team.strategy)
    problems = load_problems(suite)
    with contextlib.ExitStack() as stack:
        out = args.out or stack.enter_context(tempfile.TemporaryDirectory(prefix="memdoor-demo-"))
        problems_out = asyncio.run(_demo(config, problems, Path(out), raw_of))
    return _show(problems_out, team.name, args)


async def _demo(config, problems, out: Path, raw_of: dict[str, str]):
    from memdoor.bench.config import shown_name
    from memdoor.bench.demo import outcomes
    from memdoor.bench.loop import BenchOptions, run_bench
    from memdoor.bench.progress import make_progress
    from memdoor.bench.records import ProblemInfo
    from memdoor.bench.store import ResultsStore
    from memdoor.bench.suite import new_run
    from memdoor.memory import open_memory
    from memdoor.models.pool import ModelPool
    from memdoor.run.env import open_env

    pool = ModelPool()
    for spec in config.rows[0].models:
        pool.get(raw_of.get(spec, spec))  # a bad spec or missing weights fail here, before anything starts
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(pool.aclose)
        env = await stack.enter_async_context(
            open_env(pool=pool, trace_dir=out / "traces", slots=os.cpu_count() or 1)
        )
        run = new_run(config, problems, env.sandbox.name)
        infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
        argv = [shown_name(a, raw_of) for a in sys.argv]
        with ResultsStore.create_or_resume(out, run, infos, argv=argv) as store:
            await run_bench(
                problems,
                config,
                store,
                lambda: dataclasses.replace(env, memory=open_memory(None)),
                options=BenchOptions(raw_specs=raw_of),
                progress=make_progress(),
            )
            return outcomes(store.results(full=True), config.rows[1].name)


def _measured() -> str:
    """What the committed full benchmark measured (three problems cannot show a difference either way)."""
    import memdoor
    from memdoor.bench.measured import describe, find_run, read_measured

    run_dir = find_run(Path.cwd(), Path(memdoor.__file__))
    if run_dir is None:
        return "Three problems cannot show a difference either way: the full benchmarks are in BENCHMARKS.md."
    try:
        return describe(read_measured(run_dir, run_dir.parents[2]))
    except (OSError, ValueError, KeyError) as e:
        return f"(the committed results in {run_dir} could not be read: {type(e).__name__}: {e})"


def _cost(row) -> str:
    """``1,872 tok 1.8 TFLOP 25 s`` (compute left out when a model's size is unknown)."""
    flops = "" if row.compute is None else f" {row.compute / 1e12:.1f} TFLOP"
    return f"{row.tokens:,} tok{flops} {row.seconds:.0f} s"


def _mark(row) -> str:
    return "error" if row.error else ("passed" if row.passed else "failed")


def _show(problems, team: str, args: argparse.Namespace) -> int:
    from memdoor.bench.demo import verdict

    failed = any(p.single.error or p.team.error for p in problems)
    if args.json:
        print(
            json.dumps(
                {
                    "team": team,
                    "problems": [p.model_dump(mode="json") for p in problems],
                    "verdict": verdict(problems),
                    "measured": _measured(),
                },
                indent=1,
            )
        )
        return 1 if failed else 0
    width = max([len(p.problem_id) for p in problems] + [7])
    print(f"\n{'problem':<{width}}  {'single':<36}  {team}")
    for p in problems:
        s, t = p.single, p.team
        left = f"{_mark(s)} {_cost(s)}"
        print(f"{p.problem_id:<{width}}  {left:<36}  {_mark(t)} {_cost(t)} — {t.did}")
    print(f"\n{verdict(problems)}")
    print(_measured())
    if args.out:
        print(f"results: memdoor report {args.out}   (traces: memdoor trace ID --dir {args.out}/traces)")
    for p in problems:
        for name, row in (("single", p.single), (team, p.team)):
            if row.error:
                print(f"memdoor demo: {p.problem_id} {name} failed to run: {row.error}", file=sys.stderr)
    return 1 if failed else 0
