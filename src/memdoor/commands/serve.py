"""A team as an OpenAI-compatible model endpoint: any OpenAI client can list and use Memdoor teams.

GET /v1/models lists the teams (memdoor/<strategy>-<agents>, e.g. memdoor/parallel-5); POST
/v1/chat/completions runs that team on the conversation's coding request and answers with the chosen
code (streaming too). Tests come from the examples in the request; without any, the team writes test
inputs. The header x-memdoor-trace-id names the run: memdoor trace ID. Guide: docs/serve.md.

Examples:
  memdoor serve --model local:qwen2.5-coder-0.5b
  memdoor serve --host 0.0.0.0 --port 8080 --token "$SECRET" \\
      --model openai:Qwen/Qwen2.5-Coder-7B-Instruct@http://gpu:8000/v1 --team hybrid:5 --team single
  curl -s localhost:8080/v1/chat/completions -H 'content-type: application/json' \\
      -d '{"model": "memdoor/parallel-5", "messages": [{"role": "user", "content": "..."}]}'

Without a token (--token or $MEMDOOR_SERVE_TOKEN) only loopback addresses can be bound.
"""

from __future__ import annotations

import argparse
import os

from pydantic import ValidationError

from memdoor.commands.options import (
    MAX_TOKENS_PER_CALL,
    NON_NEGATIVE,
    PORT,
    POSITIVE,
    SECONDS_OR_ZERO,
    SEED,
    TOKENS,
    FloatRange,
    at_least,
)
from memdoor.core.errors import UsageError, first_problem

CONNECTION_SECONDS = FloatRange(0.0, 3600.0)
"""A connection timeout: more than 0, at most an hour."""


def configure(p: argparse.ArgumentParser) -> None:
    from memdoor.run.config import DEFAULT_MODEL
    from memdoor.server.config import TOKEN_ENV
    from memdoor.server.teams import DEFAULT_TEAMS

    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=PORT, default=8080, help="port to bind (default 8080; 0: any free port)")
    p.add_argument(
        "--model",
        action="append",
        metavar="SPEC",
        help=f"model spec of the agents, repeatable for a mixed team (default {DEFAULT_MODEL})",
    )
    p.add_argument(
        "--team",
        action="append",
        metavar="NAME",
        help="a team to serve, as memdoor/<strategy>-<agents> or <strategy>:<agents>, repeatable "
        f"(default: {', '.join(DEFAULT_TEAMS)})",
    )
    p.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"bearer token clients must send (default ${TOKEN_ENV}); without one, loopback only",
    )
    p.add_argument(
        "--concurrency", type=POSITIVE, default=1, metavar="C", help="team runs at once (default 1)"
    )
    p.add_argument(
        "--max-queue",
        type=NON_NEGATIVE,
        default=16,
        metavar="N",
        help="requests that may wait for a free team; more are answered 429 (default 16)",
    )
    p.add_argument(
        "--timeout",
        type=SECONDS_OR_ZERO,
        default=600.0,
        metavar="S",
        help="seconds a request may take, queue wait included; then 504 (default 600; 0: no limit)",
    )
    p.add_argument(
        "--budget-tokens",
        type=TOKENS,
        metavar="T",
        help="tokens the whole team may spend on a request; then 504 (default: no limit)",
    )
    p.add_argument(
        "--max-tokens",
        type=MAX_TOKENS_PER_CALL,
        default=1024,
        help="completion tokens per model call, at least 16 (default 1024)",
    )
    p.add_argument(
        "--test-inputs",
        type=at_least(0, 100),
        default=5,
        metavar="N",
        help="test inputs the team writes when a request shows no examples, 0 to 100 (default 5; 0: none)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="STRATEGY.KEY=VALUE",
        help="strategy option, e.g. hybrid.repair_rounds=3 or sequential.rounds=2 (repeatable)",
    )
    p.add_argument(
        "--progress",
        choices=["reasoning", "comments", "none"],
        default="reasoning",
        help="how streams show the team's progress: reasoning_content deltas (default), SSE comments, or none",
    )
    p.add_argument(
        "--max-body-bytes",
        type=at_least(1024, 1 << 30),
        default=4 * 1024 * 1024,
        metavar="B",
        help="largest request body accepted, else 413; 1 KiB to 1 GiB (default 4 MiB)",
    )
    p.add_argument(
        "--max-connections",
        type=at_least(1, 1_000_000),
        default=1000,
        metavar="N",
        help="open client connections at once; above it the one longest reading its request is closed, "
        "or the new one answered 503 (default 1000; lowered to fit the open-file limit)",
    )
    p.add_argument(
        "--idle-timeout",
        type=CONNECTION_SECONDS,
        default=5.0,
        metavar="S",
        help="seconds a connection may stay silent before its request (new or kept alive), then closed (default 5)",
    )
    p.add_argument(
        "--header-timeout",
        type=CONNECTION_SECONDS,
        default=10.0,
        metavar="S",
        help="seconds for a whole request head to arrive, then 408 (default 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=CONNECTION_SECONDS,
        default=60.0,
        metavar="S",
        help="seconds for a whole request body to arrive after its head, then 408 (default 60)",
    )
    p.add_argument(
        "--write-timeout",
        type=CONNECTION_SECONDS,
        default=30.0,
        metavar="S",
        help="seconds a client may leave its answers unread (the server's writes paused), then closed "
        "(default 30)",
    )
    p.add_argument(
        "--seed", type=SEED, default=0, help="base sampling seed when a request gives none (default 0)"
    )
    p.add_argument(
        "--review-repo",
        metavar="DIR",
        help="a git checkout: also offer memdoor/review-3 and memdoor/review-5, which review the diff "
        "a request sends against it (see docs/review.md)",
    )
    p.add_argument(
        "--review-test", metavar="CMD", help="the review repository's test command (in the sandbox)"
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin (https://host[:port]) whose pages may call the server from a browser, "
        "repeatable (default: none)",
    )
    p.add_argument(
        "--no-traces",
        action="store_true",
        help="do not save run traces (default: $MEMDOOR_HOME/traces, read with memdoor trace ID)",
    )
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])


def parse_strategy_options(items: list[str]) -> dict[str, dict[str, object]]:
    """``["hybrid.repair_rounds=3"]`` → ``{"hybrid": {"repair_rounds": 3}}`` (values parsed as JSON if they can be)."""
    from memdoor.run.config import parse_options

    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, sep, _ = item.partition("=")
        strategy, dot, option = key.partition(".")
        if not sep or not dot or not strategy.strip() or not option.strip():
            raise UsageError(
                f"bad --option {item!r}: expected STRATEGY.KEY=VALUE, e.g. hybrid.repair_rounds=3"
            )
        out.setdefault(strategy.strip(), {}).update(parse_options([item[len(strategy) + 1 :]]))
    return out


def review_repo(text: str | None):
    """The top of the checkout ``--review-repo`` names (a usage error when it is none), or None."""
    from pathlib import Path

    from memdoor.review.repo import repo_root

    return None if text is None else repo_root(Path(text), "--review-repo")


def build_config(args: argparse.Namespace):
    from memdoor.run.config import DEFAULT_MODEL
    from memdoor.run.tracestore import default_trace_dir
    from memdoor.server.config import ServeConfig
    from memdoor.server.teams import DEFAULT_TEAMS

    try:
        return ServeConfig(
            host=args.host,
            port=args.port,
            models=args.model or [DEFAULT_MODEL],
            teams=args.team or list(DEFAULT_TEAMS),
            token=args.token or None,
            concurrency=args.concurrency,
            max_queue=args.max_queue,
            timeout_s=args.timeout or None,
            budget_tokens=args.budget_tokens,
            max_tokens=args.max_tokens,
            test_inputs=args.test_inputs,
            options=parse_strategy_options(args.option),
            progress=args.progress,
            seed=args.seed,
            max_body_bytes=args.max_body_bytes,
            max_connections=args.max_connections,
            idle_timeout_s=args.idle_timeout,
            header_timeout_s=args.header_timeout,
            body_timeout_s=args.body_timeout,
            write_timeout_s=args.write_timeout,
            trace_dir=None if args.no_traces else default_trace_dir(),
            review_repo=review_repo(args.review_repo),
            review_test=args.review_test,
            cors_origins=args.cors_origin,
        )
    except ValidationError as e:
        field, msg = first_problem(e)
        flag = {"timeout_s": "timeout", "teams": "team", "models": "model"}.get(field, field)
        flag = flag.removesuffix("_s").replace("_", "-")
        raise UsageError(f"--{flag}: {msg}") from None


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM (running requests get 5 s to finish; uvicorn then exits by the signal)."""
    from memdoor.core.net import quiet_http_logs
    from memdoor.models.pool import ModelPool
    from memdoor.sandbox import SandboxConfig, open_sandbox
    from memdoor.server.launch import build_server, check_bind
    from memdoor.server.service import check_teams

    config = build_config(args)
    check_bind(config)  # before any model is loaded
    check_teams(config)
    probe = ModelPool()
    for spec in config.models:  # a bad spec or missing weights fail here, as a usage error (nothing loads)
        probe.get(spec)
    probe_sandbox = open_sandbox(SandboxConfig())  # an unusable sandbox fails here (SandboxError)
    getattr(probe_sandbox, "close", lambda: None)()
    quiet_http_logs()  # httpx would log each model request's URL at INFO, a password in it included
    # the server opens (and at shutdown closes) its own model pool and sandbox
    build_server(config, log_level=args.log_level).run()
    return 0
