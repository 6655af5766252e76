"""One agent of a distributed team, serving over Redis until SIGTERM.

The worker takes model calls for its model from the team's job streams and, unless its role is
``answer``, also serves the seed client protocol: a client sets ``task:<id>`` to JSON
``{"id", "prompt"}`` and reads the team's answer at ``memory:<id>``. Start several, on one machine or
many, all pointing at one Redis (guide: docs/distributed.md):

  memdoor worker --redis redis://10.0.0.5:6379/0 --agent-id a1 --model local:qwen2.5-coder-0.5b
  AGENT_ID=a2 MODEL_NAME=openai:Qwen/Qwen2.5-Coder-7B-Instruct@http://gpu:8000/v1 memdoor worker

Options default to the environment: REDIS_URL, REDIS_CA, AGENT_ID, MODEL_NAME, MEMDOOR_ROLE; the team
key (sign results and answers, trust only signed ones) comes from MEMDOOR_TEAM_KEY_FILE (--team-key-file)
or MEMDOOR_TEAM_KEY. The Redis password is never printed.
SIGTERM or Ctrl-C: finish (or hand back) the current job, deregister, exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys

from pydantic import ValidationError

from memdoor.commands.options import (
    AGENTS,
    MAX_TOKENS_PER_CALL,
    POSITIVE,
    SECONDS,
    SECONDS_OR_ZERO,
    at_least,
)
from memdoor.core.errors import UsageError, first_problem
from memdoor.core.limits import check_team_size
from memdoor.core.net import quiet_http_logs


def configure(p: argparse.ArgumentParser) -> None:
    env = os.environ.get
    p.add_argument(
        "--redis",
        default=env("REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="Redis URL (default: $REDIS_URL or redis://127.0.0.1:6379/0); rediss:// for TLS",
    )
    p.add_argument(
        "--redis-ca",
        metavar="FILE",
        default=env("REDIS_CA"),
        help="CA certificate(s) that sign the rediss:// server's certificate (default: $REDIS_CA)",
    )
    p.add_argument(
        "--team-key-file",
        metavar="FILE",
        default=env("MEMDOOR_TEAM_KEY_FILE"),
        help="file holding the team key: results and answers are signed with it, and only signed ones "
        "are trusted (default: $MEMDOOR_TEAM_KEY_FILE, else the key in $MEMDOOR_TEAM_KEY)",
    )
    p.add_argument(
        "--agent-id", default=env("AGENT_ID"), help="unique agent name (default: $AGENT_ID or HOST-PID)"
    )
    p.add_argument(
        "--model",
        default=env("MODEL_NAME"),
        help="model spec this agent answers with, e.g. local:qwen2.5-coder-0.5b (default: $MODEL_NAME)",
    )
    p.add_argument(
        "--role",
        default=env("MEMDOOR_ROLE", "all"),
        choices=["all", "answer", "lead"],
        help="answer: model jobs only; lead: orchestrate seed tasks only (no model); all: both",
    )
    p.add_argument("--prefix", default="memdoor:", help="prefix of the team's Redis keys (default memdoor:)")
    p.add_argument("--concurrency", type=at_least(1, 1024), default=1, help="jobs taken at once (default 1)")
    p.add_argument(
        "--visibility-timeout",
        type=SECONDS,
        default=30.0,
        help="seconds before a dead worker's job is taken over (default 30)",
    )
    p.add_argument(
        "--heartbeat-ttl", type=SECONDS, default=15.0, help="heartbeat TTL in seconds (default 15)"
    )
    p.add_argument(
        "--grace",
        type=SECONDS_OR_ZERO,
        default=30.0,
        help="seconds SIGTERM waits for the current job before handing it back (default 30)",
    )
    p.add_argument(
        "--startup-timeout",
        type=SECONDS,
        default=60.0,
        help="seconds to wait for Redis at start (default 60)",
    )
    seed = p.add_argument_group("seed protocol (task:<id> → memory:<id>)")
    seed.add_argument(
        "--strategy", default="parallel", help="strategy for tasks naming none (default parallel)"
    )
    seed.add_argument(
        "--agents",
        type=AGENTS,
        default=None,
        help="team size for tasks naming none (default: live answering workers, at most 5)",
    )
    seed.add_argument(
        "--max-tokens",
        type=MAX_TOKENS_PER_CALL,
        default=1024,
        help="completion token cap per call, at least 16 (default 1024)",
    )
    seed.add_argument(
        "--max-tasks", type=POSITIVE, default=2, help="seed tasks this worker leads at once (default 2)"
    )
    seed.add_argument("--budget-seconds", type=SECONDS, default=None, help="wall-second budget per task")
    seed.add_argument("--task-prefix", default="task:", help="key prefix clients set (default task:)")
    seed.add_argument("--answer-prefix", default="memory:", help="key prefix of answers (default memory:)")
    seed.add_argument(
        "--lease", type=SECONDS, default=30.0, help="seconds a task claim lasts unless renewed (default 30)"
    )
    seed.add_argument(
        "--poll", type=SECONDS, default=0.5, help="seconds between scans for tasks (default 0.5)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")


def worker_config(args: argparse.Namespace):
    """The WorkerConfig the arguments describe (UsageError for unusable values)."""
    from memdoor.distributed.config import SeedOptions, WorkerConfig
    from memdoor.distributed.conn import with_ca

    if args.role != "lead" and not args.model:
        raise UsageError("worker needs a model: --model SPEC or MODEL_NAME (e.g. local:qwen2.5-coder-0.5b)")
    try:
        return WorkerConfig(
            redis=with_ca(args.redis, args.redis_ca),
            prefix=args.prefix,
            agent_id=args.agent_id or f"{socket.gethostname()}-{os.getpid()}",
            model=args.model or None,
            role=args.role,
            concurrency=args.concurrency,
            visibility_timeout=args.visibility_timeout,
            heartbeat_ttl=args.heartbeat_ttl,
            grace=args.grace,
            startup_timeout=args.startup_timeout,
            seed=SeedOptions(
                task_prefix=args.task_prefix,
                answer_prefix=args.answer_prefix,
                strategy=args.strategy,
                agents=args.agents,
                max_tokens=args.max_tokens,
                max_tasks=args.max_tasks,
                budget_seconds=args.budget_seconds,
                poll=args.poll,
                lease=args.lease,
            ),
        )
    except ValidationError as e:
        where, msg = first_problem(e)
        raise UsageError(f"bad worker option {where}: {msg}") from None


def team_key(args: argparse.Namespace):
    """The team key of ``--team-key-file``, else of the environment, else None (UsageError if unusable)."""
    from memdoor.distributed.signing import TeamKey

    if args.team_key_file:
        return TeamKey.from_file(args.team_key_file)
    return TeamKey.from_env()


def run(args: argparse.Namespace) -> int:
    from memdoor.models.pool import ModelPool

    config = worker_config(args)
    key = team_key(args)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    quiet_http_logs()  # httpx would log each model request's URL at INFO, a password in it included
    pool = ModelPool()
    model = pool.get(config.model) if config.model else None  # ModelSpecError: exit 2, one line
    if config.leads:
        from memdoor.run.config import StrategySpec

        spec = StrategySpec.parse(config.seed.strategy, agents=config.seed.agents or 1)
        check_team_size(spec.agents, config.seed.strategy)
    return asyncio.run(_serve(config, model, pool, key))


async def _serve(config, model, pool, key) -> int:
    from memdoor.distributed.worker import Worker

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    worker = Worker(config, model, team_key=key)
    alongside = []
    if config.leads:  # the seed protocol: this agent also leads tasks (task:<id> in, memory:<id> out)
        from memdoor.distributed.seed import SeedLeader

        alongside.append(SeedLeader(config, worker.redis, worker.instance, team_key=key).run)
    try:
        await worker.run(stop, alongside=alongside)
    finally:
        await worker.aclose()
        await pool.aclose()
    return 0
