"""Team memory and selector overhead: latency per operation and append throughput, on loopback.

    .venv/bin/python benchmarks/memory_bench.py [--redis URL] [--ops N] [--select-rounds N]

Without ``--redis`` it uses 127.0.0.1:6379 when that answers, else starts a throwaway
redis-server on a free loopback port (and stops it). Keys go under a random prefix and are
deleted afterwards. The selector part times a team's selection (``TeamRun.select``: the
``VoteSelector`` decides, the team records its vote) with a sandbox that replays recorded verdicts
instantly, so what is measured is Memdoor's own time (grouping, voting, the memory writes), not the
candidates'.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable

from memdoor.agents.team import Agent, AgentConfig, Team
from memdoor.core.candidates import Candidate
from memdoor.core.problem import Problem, TestCase
from memdoor.core.verdict import TestResult, Verdict
from memdoor.judging.judge import Judge
from memdoor.memory.inproc import InProcMemory
from memdoor.memory.redis_memory import RedisMemory
from memdoor.models.scripted import ScriptedModel
from memdoor.select.vote import VoteSelector
from memdoor.strategies.base import TeamRun
from memdoor.strategies.context import RunContext

DRAFT = {"agent": "a3", "round": 1, "code": "def f(x):\n    return x * 2\n" * 20, "mean_logprob": -0.31}


def _reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _start_redis() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server not found; pass --redis URL")
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tempfile.mkdtemp(prefix="memdoor-bench-redis-"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not _reachable(port):
        if time.monotonic() > deadline:
            proc.kill()
            sys.exit("could not start redis-server")
        time.sleep(0.05)
    return proc, f"redis://127.0.0.1:{port}/0"


async def _latency(op: Callable[[int], Awaitable[object]], n: int) -> tuple[float, float]:
    """(p50, p99) of one awaited operation, in microseconds."""
    samples = []
    for i in range(n):
        t = time.perf_counter()
        await op(i)
        samples.append((time.perf_counter() - t) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(0.99 * (len(samples) - 1))]


async def _bench_backend(mem, ops: int) -> dict[str, object]:
    task = f"bench-{uuid.uuid4().hex[:8]}"
    out: dict[str, object] = {}
    out["append"] = await _latency(lambda i: mem.append(task, "drafts", DRAFT), ops)
    out["entries(5)"] = await _latency(lambda i: mem.entries(task, "drafts", start=ops - 5), ops)
    out["set_final"] = await _latency(lambda i: mem.set_final(task, DRAFT), ops)
    out["get_final"] = await _latency(lambda i: mem.get_final(task), ops)
    writers, per = 50, max(1, ops // 10)
    t = time.perf_counter()
    await asyncio.gather(*(_append_many(mem, f"{task}-c", per) for _ in range(writers)))
    out["concurrent appends/s (50 coroutines)"] = writers * per / (time.perf_counter() - t)
    assert len(await mem.entries(f"{task}-c", "drafts")) == writers * per
    return out


async def _append_many(mem, task: str, n: int) -> None:
    for _ in range(n):
        await mem.append(task, "drafts", DRAFT)


CHILD = """
import asyncio, sys, time
from memdoor.memory.redis_memory import RedisMemory
async def main(url, prefix, n):
    mem = RedisMemory(url, prefix=prefix)
    draft = {"agent": "a", "code": "x" * 400}
    async def w():
        for _ in range(n // 10):
            await mem.append("mp", "drafts", draft)
    await mem.ping()
    t0 = time.time()
    await asyncio.gather(*(w() for _ in range(10)))
    print(t0, time.time())
    await mem.aclose()
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def _multiprocess(url: str, prefix: str, procs: int, per: int) -> float:
    """Appends per second while ``procs`` processes append (from first start to last finish,
    each process's start-up excluded)."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, url, prefix, str(per)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(procs)
    ]
    spans = []
    for c in children:
        out, _ = c.communicate(timeout=600)
        if c.returncode != 0:
            sys.exit("a writer process failed")
        spans.append([float(x) for x in out.split()])
    return procs * (per // 10 * 10) / (max(e for _, e in spans) - min(s for s, _ in spans))


class ReplaySandbox:
    """Returns a recorded verdict per (program, number of tests) at once: no candidate time at all."""

    name = "replay"

    def __init__(self, table: dict[tuple[str, int], Verdict]) -> None:
        self.table = table

    def run(self, code, tests, **kw) -> Verdict:
        return self.table[(code, len(tests))]


def _team_run(sandbox, problem: Problem, extra: list[TestCase]) -> TeamRun:
    """A team's working state on ``problem``, fresh memory and trace, ready to select (no model is called)."""
    ctx = RunContext(judge=Judge(sandbox), memory=InProcMemory(), selector=VoteSelector())
    agent = Agent(AgentConfig(id="a0", model="scripted"), ScriptedModel(["unused"], spec="scripted"))
    run = TeamRun(problem, Team([agent]), ctx)
    run.extra_inputs = extra
    return run


async def _bench_selector(rounds: int) -> tuple[float, float]:
    public = [TestCase(kind="functional", input=str(i), output=str(2 * i)) for i in range(3)]
    extra = [TestCase(kind="functional", input=str(10 + i)) for i in range(5)]
    problem = Problem(id="p", statement="double", func_name="f", public_tests=public)
    codes = [f"def f(x):\n    return x * 2  # variant {v}\n" for v in range(5)]
    table = {}
    for v, code in enumerate(codes):
        table[(code, 3)] = Verdict(
            status="passed", tests=[TestResult(status="passed", output=json.dumps(2 * i)) for i in range(3)]
        )
        table[(code, 5)] = Verdict(
            status="passed",
            tests=[TestResult(status="passed", output=json.dumps(2 * (10 + i) + (v % 2))) for i in range(5)],
        )
    cands = [Candidate(code=c, agent=f"a{i}", mean_logprob=-0.1 * i) for i, c in enumerate(codes)]
    times = []
    for _ in range(rounds):
        run = _team_run(ReplaySandbox(table), problem, extra)
        t = time.perf_counter()
        _, sel = await run.select(cands)
        times.append((time.perf_counter() - t) * 1e3)
        assert sel.groups == [[0, 2, 4], [1, 3]]
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


async def _bench_selector_real(rounds: int) -> tuple[float, float]:
    """(p50, max) wall seconds of a selection among 5 distinct candidates with the real sandbox."""
    from memdoor.sandbox import open_sandbox

    sandbox = open_sandbox()
    public = [TestCase(kind="functional", input=str(i), output=str(2 * i)) for i in range(3)]
    extra = [TestCase(kind="functional", input=str(10 + i)) for i in range(5)]
    problem = Problem(id="p", statement="double", func_name="f", public_tests=public)
    cands = [
        Candidate(code=f"def f(x):\n    return x * 2 + (x > 11) * {v % 2}  # {v}\n", agent=f"a{v}")
        for v in range(5)
    ]
    times = []
    with sandbox:  # closed at the end (the sandboxes it started ahead hold uids)
        for _ in range(rounds):
            run = _team_run(sandbox, problem, extra)
            t = time.perf_counter()
            _, sel = await run.select(cands)
            times.append(time.perf_counter() - t)
            assert sel.groups == [[0, 2, 4], [1, 3]], sel.groups
    return statistics.median(times), max(times)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--redis", help="Redis URL (default: 127.0.0.1:6379 if it answers, else a throwaway server)"
    )
    ap.add_argument("--ops", type=int, default=2000, help="operations per latency measurement")
    ap.add_argument("--select-rounds", type=int, default=200, help="selector calls to time")
    ap.add_argument(
        "--real-rounds", type=int, default=10, help="selections to time with the real sandbox (0: skip)"
    )
    args = ap.parse_args()

    server = None
    url = args.redis
    if url is None:
        if _reachable(6379):
            url = "redis://127.0.0.1:6379/0"
        else:
            server, url = _start_redis()
    prefix = f"memdoor-bench-{uuid.uuid4().hex[:8]}:"
    try:
        results = {"inproc": await _bench_backend(InProcMemory(), args.ops)}
        redis_mem = RedisMemory(url, prefix=prefix)
        try:
            results["redis"] = await _bench_backend(redis_mem, args.ops)
            mp = _multiprocess(url, prefix, 4, max(10, args.ops // 2))
        finally:
            async for key in redis_mem.redis.scan_iter(match=f"{prefix}*", count=1000):
                await redis_mem.redis.delete(key)
            await redis_mem.aclose()
        sel_p50, sel_p99 = await _bench_selector(args.select_rounds)
        real = await _bench_selector_real(args.real_rounds) if args.real_rounds else None
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)

    print(f"redis: {url}   ops per latency figure: {args.ops}")
    print(f"{'operation':40} {'inproc p50/p99 µs':>22} {'redis p50/p99 µs':>22}")
    for op, v in results["inproc"].items():
        r = results["redis"][op]
        if isinstance(v, tuple):
            print(f"{op:40} {v[0]:>10.1f} / {v[1]:<9.1f} {r[0]:>10.1f} / {r[1]:<9.1f}")
        else:
            print(f"{op:40} {v:>22,.0f} {r:>22,.0f}")
    print(f"{'appends/s, 4 processes × 10 coroutines':40} {'-':>22} {mp:>22,.0f}")
    print(
        f"VoteSelector.select, 5 candidates, 3 public + 5 extra inputs, instant sandbox: "
        f"p50 {sel_p50:.2f} ms, p99 {sel_p99:.2f} ms (own time, in-process memory)"
    )
    if real:
        print(
            f"same selection with the real sandbox ({args.real_rounds} rounds, 5 distinct candidates): "
            f"p50 {real[0] * 1e3:.0f} ms, max {real[1] * 1e3:.0f} ms; "
            f"selector own time = {sel_p50 / (real[0] * 1e3):.2%} of that"
        )


if __name__ == "__main__":
    asyncio.run(main())
