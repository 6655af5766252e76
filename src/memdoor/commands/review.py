"""A team reviews a diff: findings ⌈N/2⌉ agents agree on, minority findings ranked, and a patch of the
agreed suggestions offered with the repository's tests run on it in a sandbox.

DIFF is a unified diff file, or - for standard input; it is applied to a copy of the git checkout at
--repo (default: the current one), or taken as already applied when the checkout holds it. Exit code
0 when no consensus finding is at or above --fail-on, 1 otherwise (or when the review failed), 2 for
bad input (not a diff, binary, too large, does not apply).

Examples:
  git diff main | memdoor review - --agents 5 --test "python3 -m pytest -q"
  memdoor review change.diff --repo ../project --format sarif > review.sarif
  memdoor review change.diff --model local:qwen2.5-coder-1.5b --json --fail-on medium

The trace is kept in $MEMDOOR_HOME/traces (default ~/.cache/memdoor/traces): memdoor trace ID.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from pathlib import Path

from memdoor.bench.config import parse_params
from memdoor.budget import Budget
from memdoor.commands.options import (
    AGENTS,
    MAX_AGENTS,
    MAX_TOKENS_PER_CALL,
    SECONDS,
    SEED,
    TOKENS,
    at_least,
)
from memdoor.errors import ReviewInputError

FORMATS = ("markdown", "json", "sarif")
FAIL_ON = ("info", "low", "medium", "high", "critical", "never")


def configure(p: argparse.ArgumentParser) -> None:
    from memdoor.runner import DEFAULT_MODEL

    p.add_argument("diff", metavar="DIFF", help="unified diff file, or - for standard input")
    p.add_argument("--repo", type=Path, default=Path("."), metavar="DIR", help="git checkout (default: .)")
    p.add_argument(
        "--test", metavar="CMD", help="shell command running the tests, e.g. 'python3 -m pytest -q'"
    )
    p.add_argument(
        "--agents", type=AGENTS, default=3, metavar="N", help=f"reviewers, 1 to {MAX_AGENTS} (default 3)"
    )
    p.add_argument(
        "--model",
        action="append",
        metavar="SPEC",
        help=f"model spec, repeatable for a mixed team, assigned round-robin (default {DEFAULT_MODEL})",
    )
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default markdown)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="high",
        help="exit 1 when a consensus finding is this severe or more (default high; never: always 0)",
    )
    p.add_argument("--budget-tokens", type=TOKENS, metavar="T", help="stop after T prompt+completion tokens")
    p.add_argument("--budget-calls", type=TOKENS, metavar="C", help="stop after C model calls")
    p.add_argument("--budget-seconds", type=SECONDS, metavar="S", help="stop after S seconds")
    p.add_argument("--test-timeout", type=SECONDS, default=600.0, metavar="S", help="seconds per test run")
    p.add_argument(
        "--part-chars",
        type=at_least(1000),
        default=9000,
        metavar="C",
        help="largest part of the diff (one file and its context) sent to an agent (default 9000)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="base sampling seed (default 0)")
    p.add_argument(
        "--params",
        action="append",
        default=[],
        metavar="SPEC=N",
        help="parameter count of a model the catalog does not know, for the review's compute "
        "(e.g. openai:qwen@http://h/v1=7e9; repeatable)",
    )
    p.add_argument(
        "--max-tokens",
        type=MAX_TOKENS_PER_CALL,
        default=1024,
        help="completion tokens per call (default 1024)",
    )


def read_diff(source: str) -> str:
    """The diff text from a file or ``-`` (stdin); ReviewInputError when it cannot be read as text."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as e:
        raise ReviewInputError(f"cannot read the diff {source}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReviewInputError(f"the diff {source} is not UTF-8 text (a binary file?)") from None


def build_config(args: argparse.Namespace):
    from memdoor.review.session import ReviewConfig
    from memdoor.runner import DEFAULT_MODEL

    return ReviewConfig(
        agents=args.agents,
        models=args.model or [DEFAULT_MODEL],
        test=args.test,
        fail_on=args.fail_on,
        budget=Budget(tokens=args.budget_tokens, calls=args.budget_calls, seconds=args.budget_seconds),
        seed=args.seed,
        max_tokens=args.max_tokens,
        test_timeout_s=args.test_timeout,
        max_part_chars=args.part_chars,
        params=parse_params(args.params),
    )


def run(args: argparse.Namespace) -> int:
    from memdoor.review.formats import to_json, to_markdown
    from memdoor.review.sarif import to_sarif
    from memdoor.review.session import prepare

    fmt = "json" if args.json else args.format
    config = build_config(args)
    if args.test is not None and not args.test.strip():
        raise ReviewInputError("--test: the command is empty")
    text = read_diff(args.diff)
    with tempfile.TemporaryDirectory(prefix="memdoor-review-") as tmp:
        prepared = prepare(text, args.repo, config, Path(tmp))
        report = asyncio.run(_review(prepared, config))
    if fmt == "json":
        print(json.dumps(to_json(report)))
    elif fmt == "sarif":
        print(json.dumps(to_sarif(report), indent=2))
    else:
        print(to_markdown(report), end="")
    if report.error:
        print(f"memdoor: review: {report.error}", file=sys.stderr)
        return 1
    return 1 if report.fails() else 0


async def _review(prepared, config):
    from memdoor.models.pool import ModelPool
    from memdoor.review.session import run_review
    from memdoor.runner import open_env
    from memdoor.tracestore import default_trace_dir

    async with contextlib.AsyncExitStack() as stack:
        pool = ModelPool()
        stack.push_async_callback(pool.aclose)
        for spec in config.models:  # a bad spec or missing weights fail here, as a usage error
            pool.get(spec)
        env = await stack.enter_async_context(open_env(pool=pool, trace_dir=default_trace_dir()))
        return await run_review(prepared, config, env)
