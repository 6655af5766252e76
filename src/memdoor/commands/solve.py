"""A team solves one problem: strategy, team size and models chosen on the command line.

The answer is graded in the sandbox as the problem's benchmark grades it: public and hidden tests
(LiveCodeBench, user files), the hidden check() alone (HumanEval), or the public tests when a problem
has no hidden tests; the output says which. Exit code 0 when the answer passes, 1 when it
does not (or the run failed), 2 for a usage error.

Examples:
  memdoor solve humaneval --problem HumanEval/0
  memdoor solve data.jsonl --problem two-sum --strategy parallel --agents 5 --json
  memdoor solve data.jsonl --problem two-sum --strategy sequential:2 \\
      --model local:qwen2.5-coder-0.5b --model local:qwen2.5-coder-1.5b --option rounds=2
  memdoor solve humaneval --problem HumanEval/0 --team best --budget-compute 3e12

--team best picks the configuration that solved the most at a mean compute per problem of at most
--budget-compute in a measurement (the one shipped with memdoor for the problem's language, with the local
models whose weights are installed: HumanEval for Python, HumanEval-X JavaScript for JavaScript,
HumanEval-X Rust for Rust; HumanEval, saying so, where that has no configuration of your models; or your
own bench directory, --from DIR, remote models included), and says which; --model restricts it to
configurations of those models. The chosen configuration then runs as it was measured, with the compute
budget of its bench run (not --budget-compute as a cap). See docs/benchmarks.md.

The trace is kept in $MEMDOOR_HOME/traces (default ~/.cache/memdoor/traces): memdoor trace ID.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from typing import Any

from memdoor.commands.options import (
    AGENTS,
    FLOPS,
    MAX_AGENTS,
    MAX_TOKENS_PER_CALL,
    SECONDS,
    SEED,
    TOKENS,
    at_least,
)
from memdoor.core.budget import Budget
from memdoor.core.errors import UsageError
from memdoor.core.limits import check_team_size
from memdoor.core.registry import names
from memdoor.core.solution import Solution


def configure(p: argparse.ArgumentParser) -> None:
    from memdoor.run.config import DEFAULT_MODEL

    p.add_argument(
        "problems",
        help="problem source: LiveCodeBench .jsonl, 'humaneval', 'humaneval-js', 'humaneval-rust', or a "
        "user .yaml/.json file",
    )
    p.add_argument(
        "--problem", metavar="ID", help="id of the problem to solve (optional if the file has one)"
    )
    p.add_argument(
        "--language",
        choices=["python", "javascript", "rust"],
        default=None,
        help="language of the answers to standard-input problems (default: each problem's own; HumanEval-X "
        "suites are JavaScript or Rust already)",
    )
    p.add_argument(
        "--languages",
        metavar="LANG,LANG",
        help="a mixed-language team on a standard-input problem: the agents' languages, round-robin "
        "(e.g. python,javascript,rust); their programs vote by behaviour on the same inputs",
    )
    p.add_argument(
        "--strategy",
        default="single",
        metavar="NAME[:N]",
        help=f"team strategy: {', '.join(names('strategy'))} (default single); NAME:N sets the team size",
    )
    p.add_argument(
        "--agents",
        type=AGENTS,
        metavar="N",
        help=f"team size, 1 to {MAX_AGENTS} (default 1 for single, else 5)",
    )
    p.add_argument(
        "--model",
        action="append",
        metavar="SPEC",
        help=f"model spec, repeatable for a mixed team, assigned round-robin (default {DEFAULT_MODEL})",
    )
    p.add_argument("--budget-tokens", type=TOKENS, metavar="T", help="stop after T prompt+completion tokens")
    p.add_argument("--budget-calls", type=TOKENS, metavar="C", help="stop after C model calls")
    p.add_argument(
        "--budget-compute",
        type=FLOPS,
        metavar="FLOPS",
        help="stop after FLOPS of compute (≈ 2 × parameters × tokens), e.g. 3e12; with --team best instead "
        "the measured mean compute per problem the chosen configuration may have (it then runs with the "
        "budget it was measured with)",
    )
    p.add_argument(
        "--team",
        choices=["best"],
        help="best: the measured configuration that solved the most within --budget-compute (instead of "
        "--strategy/--agents/--option)",
    )
    p.add_argument(
        "--from",
        dest="measured_from",
        metavar="DIR",
        help="with --team best: choose from this memdoor bench results directory instead of the measurement "
        "shipped for the problem's language (e.g. a bench of your remote models)",
    )
    p.add_argument("--budget-seconds", type=SECONDS, metavar="S", help="stop after S seconds of solving")
    p.add_argument("--seed", type=SEED, default=0, help="base sampling seed (default 0)")
    p.add_argument(
        "--max-tokens",
        type=MAX_TOKENS_PER_CALL,
        default=None,
        help="completion tokens per call, at least 16 (default 1024; with --team best, the measured run's)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy option, e.g. rounds=2, repair_rounds=3, inputs=5 (repeatable)",
    )
    p.add_argument(
        "--vote-k",
        type=at_least(1),
        metavar="K",
        help="agreeing candidates that win the vote outright (default: half the candidates, rounded up)",
    )
    p.add_argument("--json", action="store_true", help="print exactly one JSON object with the result")
    p.add_argument("--no-live", action="store_true", help="no live view of the team on a terminal")
    p.add_argument(
        "--redis",
        metavar="URL",
        help="distributed team: model calls go to `memdoor worker` processes on this Redis, "
        "and the team memory (drafts, votes, trace) lives there",
    )


def build_config(args: argparse.Namespace, language: str | None = None, platform: str | None = None):
    """The run's configuration; with --team best, chosen for a problem in ``language`` (None: HumanEval's)
    from ``platform`` (None: not known)."""
    from memdoor.problems.languages import parse_languages
    from memdoor.run.config import DEFAULT_MODEL, SolveConfig, StrategySpec, parse_options

    if team_best(args):
        return best_config(args, language, platform)
    if getattr(args, "measured_from", None):
        raise UsageError("--from DIR goes with --team best")
    spec = StrategySpec.parse(args.strategy, agents=args.agents)
    if args.agents is not None and spec.agents != args.agents:
        raise UsageError(f"--strategy {args.strategy} and --agents {args.agents} disagree on the team size")
    if args.agents is None and ":" not in args.strategy and spec.name != "single":
        spec = StrategySpec(name=spec.name, agents=5)
    check_team_size(spec.agents, args.strategy)
    config = SolveConfig(
        strategy=spec,
        models=args.model or [DEFAULT_MODEL],
        budget=budget_of(args),
        seed=args.seed,
        max_tokens=args.max_tokens or 1024,
        options=parse_options(args.option),
        selector_options={} if args.vote_k is None else {"k": args.vote_k},
        languages=[] if not args.languages else parse_languages(args.languages, "--languages"),
    )
    config.make_strategy()  # bad options fail here, before any model is loaded
    config.make_selector()
    return config


def budget_of(args: argparse.Namespace) -> Budget:
    return Budget(
        tokens=args.budget_tokens,
        calls=args.budget_calls,
        seconds=args.budget_seconds,
        compute=getattr(args, "budget_compute", None),
    )


def usable_models(args: argparse.Namespace) -> Callable[[list[str]], bool]:
    """Which measured teams the user can run: those of the --model specs given; else, from their own bench
    directory, any; else the local models whose weights are installed."""
    if args.model:
        return lambda models: set(models) <= set(args.model)
    if args.measured_from:
        return lambda models: True
    from memdoor.models.catalog import CATALOG
    from memdoor.models.weights import WeightsStore

    store = WeightsStore(progress=False)
    have = set()
    for name, entry in CATALOG.items():
        status = store.status(entry)
        if status.assembled or status.packages_installed == status.packages_total:
            have.add(f"local:{name}")
    return lambda models: set(models) <= have


def team_best(args: argparse.Namespace) -> bool:
    return getattr(args, "team", None) == "best"


def check_best(args: argparse.Namespace) -> None:
    """UsageError for flags --team best cannot take."""
    if args.budget_compute is None:
        raise UsageError("--team best needs --budget-compute FLOPS (e.g. 3e12): the compute it may spend")
    given = [
        f
        for f, v in (
            ("--strategy", args.strategy != "single"),
            ("--agents", args.agents),
            ("--option", args.option),
            ("--languages", args.languages),
        )
        if v
    ]
    if given:
        raise UsageError(f"--team best chooses the team: leave out {', '.join(given)}")


def best_config(args: argparse.Namespace, language: str | None = None, platform: str | None = None):
    """--team best: the measured configuration that solved the most within --budget-compute, from --from DIR
    or the measurement shipped for a problem in ``language``; a problem from another ``platform`` than the
    shipped measurement's suites is told so."""
    from memdoor.bench import preset
    from memdoor.run.config import SolveConfig, StrategySpec

    check_best(args)
    usable = usable_models(args)
    m, note = (
        (preset.from_directory(args.measured_from), None)
        if args.measured_from
        else preset.shipped_for(language, usable)
    )
    row = preset.choose(m, args.budget_compute, usable)
    elsewhere = None if args.measured_from else preset.other_suite_note(m, platform)
    args.preset_line = "\n".join(
        filter(None, (note, elsewhere, preset.describe(row, m, args.budget_compute, usable)))
    )
    run = m.run_of(row)
    # --budget-compute only chose the row (by its mean): it runs with the budget it was measured with
    budget = Budget(
        tokens=args.budget_tokens if args.budget_tokens is not None else run.budget_tokens,
        calls=args.budget_calls,
        seconds=args.budget_seconds,
        compute=run.budget_compute,
    )
    config = SolveConfig(
        strategy=StrategySpec.parse(row.strategy),
        models=list(row.models),
        budget=budget,
        seed=args.seed,
        max_tokens=args.max_tokens or run.max_tokens,
        params=dict(run.params),
        languages=list(row.languages),
        options=dict(row.options),
        selector_options={} if args.vote_k is None else {"k": args.vote_k},
    )
    config.make_strategy()
    config.make_selector()
    return config


JSON_FIELDS = {
    "problem_id", "strategy", "passed", "code", "language", "verdict", "agents", "agent", "confidence", "agreement",
    "p_correct", "p_correct_basis", "oracle",
    "stopped", "failures", "error", "trace_id",
}  # fmt: skip
"""Fields of :meth:`Solution.record` in the ``--json`` object (with ``graded_on`` and ``ledger``)."""


def result_json(solution: Solution, graded_on: str) -> dict[str, Any]:
    """The ``--json`` object."""
    r = solution.record()
    t = r.totals
    ledger = t.model_dump(include={"calls", "failed_calls", "prompt_tokens", "completion_tokens", "usd"})
    return {
        **r.model_dump(mode="json", include=JSON_FIELDS),
        "graded_on": graded_on,
        "ledger": {**ledger, "wall_seconds": round(t.wall_seconds, 3)},
    }


SCOPES = {
    "public+hidden": "public and hidden tests",
    "hidden": "the hidden tests",
    "public": "public tests only: this problem has no hidden tests",
}


def public_status(solution: Solution) -> str:
    """How the chosen code did on the tests the team saw: ``passed 2 of 2``, ``failed 1 of 2 (wrong_answer)``."""
    v = solution.public_verdict
    if v is None:
        return "-"
    if v.passed:
        return f"passed {v.tests_passed} of {v.tests_total}" if v.tests_total else "passed (none to run)"
    return f"failed {v.tests_total - v.tests_passed} of {v.tests_total} ({v.status})"


def summary(solution: Solution, graded_on: str, language: str = "python") -> str:
    """A readable summary of the result (the code fenced in its language)."""
    v, t = solution.verdict, solution.ledger.totals()
    verdict = "not graded" if v is None else f"{v.status}, {v.tests_passed}/{v.tests_total} tests"
    scope = SCOPES[graded_on]
    usd = "unpriced" if t.usd is None else f"${t.usd:.4f}"
    lines = [
        f"problem   {solution.problem_id}",
        f"strategy  {solution.strategy}  team: {', '.join(solution.agents)}",
        f"result    {'PASSED' if solution.passed else 'FAILED'} ({verdict}; graded on {scope})",
        f"answer by {solution.agent or '-'}  {solution.agreement() or 'no vote'}  public tests: "
        f"{public_status(solution)}  any candidate correct: {'yes' if solution.oracle else 'no'}"
        f"  stopped: {solution.stopped}",
        f"cost      {t.calls} calls, {t.prompt_tokens} prompt + {t.completion_tokens} completion tokens, "
        f"{t.wall_seconds:.1f} s, {usd}",
    ]
    if solution.p_correct is not None:
        lines.append(
            f"estimate  P(correct) ≈ {solution.p_correct:.2f} before grading (calibrated on {solution.p_correct_basis})"
        )
    lines += [f"failure   {f.agent}: {f.error}" for f in solution.failures]
    if solution.error:
        lines.append(f"error     {solution.error}")
    lines.append(f"trace     memdoor trace {solution.trace_id}")
    if solution.code:
        lines += ["", f"```{language}", solution.code, "```"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from memdoor.problems.languages import check_mixable, in_language
    from memdoor.problems.load import find_problem, load_problems

    # --team best's team is chosen for the problem's language, once the problem is loaded
    config = None if team_best(args) else build_config(args)
    problems = in_language(load_problems(args.problems), args.language)
    if args.problem is None:
        if len(problems) != 1:
            raise UsageError(f"{args.problems} has {len(problems)} problems: choose one with --problem ID")
        problem = problems[0]
    else:
        problem = find_problem(problems, args.problem)
    if config is None:
        config = build_config(args, problem.language, problem.platform)
        print(args.preset_line, file=sys.stderr)
    check_mixable(problem, config.languages)
    live = sys.stderr.isatty() and not args.json and not args.no_live
    solution = asyncio.run(_solve(problem, config, live, args.redis))
    if args.json:
        print(json.dumps(result_json(solution, problem.graded_on)))
    else:
        print(summary(solution, problem.graded_on, solution.language or problem.language))
    return 0 if solution.passed else 1


async def _solve(problem, config, live: bool, redis: str | None = None) -> Solution:
    from memdoor.models.pool import ModelPool
    from memdoor.run.env import open_env
    from memdoor.run.solve import solve_problem
    from memdoor.run.tracestore import default_trace_dir

    async with contextlib.AsyncExitStack() as stack:
        if redis:  # the agents' models are served by `memdoor worker` processes; the memory is Redis
            from memdoor.distributed.remote import remote_pool
            from memdoor.distributed.signing import TeamKey

            # with MEMDOOR_TEAM_KEY(_FILE) set, only results the workers signed are taken
            pool = await stack.enter_async_context(
                remote_pool(redis, config.models, team_key=TeamKey.from_env())
            )
        else:
            pool = ModelPool()
            stack.push_async_callback(pool.aclose)
            for spec in config.models:  # a bad spec or missing weights fail here, as a usage error
                pool.get(spec)
        on_event = None
        if live:
            from memdoor.run.live import LiveView

            on_event = stack.enter_context(LiveView(f"{problem.id} — {config.strategy}")).on_event
        env = await stack.enter_async_context(
            open_env(memory_url=redis, pool=pool, trace_dir=default_trace_dir(), on_event=on_event)
        )
        return await solve_problem(problem, config, env)
