"""Distributed mode: Redis coordination overhead per agent step, and throughput with 1, 2, 4 workers.

Part 1 (overhead): one `memdoor worker` process with a zero-latency scripted model; the orchestrator
sends CALLS model calls one after another through Redis (XADD → worker XREADGROUP → result SET NX →
reply → orchestrator reads it) and times each round trip; p50/p95 in milliseconds.

Part 2 (throughput): one embedded-model engine process (the real Qwen2.5-Coder-0.5B), shared by 1, 2
and 4 workers through the openai backend; JOBS identical-length generations are enqueued at once and
the wall time until all are answered gives jobs/s and generated tokens/s.

Everything runs on loopback with a redis-server of its own (no persistence)::

    .venv/bin/python benchmarks/redis_overhead.py                  # both parts
    .venv/bin/python benchmarks/redis_overhead.py --skip-model     # overhead only (seconds)
    .venv/bin/python benchmarks/redis_overhead.py --jobs 4 --max-tokens 48 --engine-threads 1   # a busy CPU
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memdoor.distributed.remote import RemoteConfig, RemoteRun  # noqa: E402

PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
for _name in ("REDIS_URL", "AGENT_ID", "MODEL_NAME", "MEMDOOR_ROLE"):
    ENV.pop(_name, None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(workdir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("could not start redis-server")


def start_worker(url: str, agent_id: str, model: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            PY,
            "-m",
            "memdoor",
            "worker",
            "--redis",
            url,
            "--agent-id",
            agent_id,
            "--model",
            model,
            "--role",
            "answer",
            "-q",
        ],
        env=ENV,
        stdout=subprocess.DEVNULL,
    )


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()


async def wait_workers(url: str, n: int) -> None:
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(url)
    try:
        for _ in range(1200):
            if await r.hlen("memdoor:agents") >= n:
                return
            await asyncio.sleep(0.1)
        raise SystemExit(f"{n} worker(s) did not register")
    finally:
        await r.aclose()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def overhead(url: str, spec: str, calls: int, warmup: int) -> dict:
    run = RemoteRun(RemoteConfig(url=url))
    model = run.model(spec)
    times = []
    for i in range(warmup + calls):
        t0 = time.perf_counter()
        await model.complete([{"role": "user", "content": f"call {i}"}], max_tokens=8)
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
    await model.aclose()
    return {
        "calls": calls,
        "p50_ms": round(pct(times, 0.5), 3),
        "p95_ms": round(pct(times, 0.95), 3),
        "mean_ms": round(statistics.fmean(times), 3),
        "max_ms": round(max(times), 3),
    }


PROMPT = "Write a Python module with ten small utility functions for strings and lists, with docstrings."


async def throughput(url: str, spec: str, jobs: int, max_tokens: int) -> dict:
    run = RemoteRun(RemoteConfig(url=url))
    model = run.model(spec)

    async def one(i: int):
        return await model.complete(
            [{"role": "user", "content": PROMPT}], max_tokens=max_tokens, temperature=0.0, seed=i
        )

    t0 = time.perf_counter()
    responses = await asyncio.gather(*(one(i) for i in range(jobs)))
    wall = time.perf_counter() - t0
    await model.aclose()
    tokens = sum(r.usage.completion_tokens for r in responses)
    return {
        "jobs": jobs,
        "seconds": round(wall, 2),
        "jobs_per_s": round(jobs / wall, 3),
        "completion_tokens": tokens,
        "tokens_per_s": round(tokens / wall, 1),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=500, help="timed calls for the overhead (default 500)")
    p.add_argument("--jobs", type=int, default=8, help="jobs per throughput run (default 8)")
    p.add_argument("--max-tokens", type=int, default=96, help="tokens generated per job (default 96)")
    p.add_argument("--workers", default="1,2,4", help="worker counts for throughput (default 1,2,4)")
    p.add_argument("--skip-model", action="store_true", help="overhead only, no embedded model")
    p.add_argument("--engine-threads", type=int, default=None, help="engine CPU threads (default: all cores)")
    args = p.parse_args()
    # SIGTERM (e.g. from `timeout`) unwinds through the finally blocks, so no child is left running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="memdoor-bench-")
    redis_proc, url = start_redis(tmp)
    results: dict = {"redis": url}
    try:
        answers = Path(tmp) / "answers.json"
        answers.write_text(json.dumps(["ok"]))
        spec = f"scripted:{answers}"
        w = start_worker(url, "zero", spec)
        try:
            asyncio.run(wait_workers(url, 1))
            results["overhead"] = asyncio.run(overhead(url, spec, args.calls, warmup=50))
            print(json.dumps({"overhead": results["overhead"]}), flush=True)
        finally:
            stop([w])
        if not args.skip_model:
            engine = subprocess.Popen(
                [
                    PY,
                    "-m",
                    "memdoor.distributed.engine_server",
                    "--model",
                    "qwen2.5-coder-0.5b",
                    "--slots",
                    "4",
                    *(["--threads", str(args.engine_threads)] if args.engine_threads else []),
                ],
                env=ENV,
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                model_spec = engine.stdout.readline().strip()
                if not model_spec:
                    raise SystemExit("the engine server did not start")
                results["throughput"] = []
                for n in [int(x) for x in args.workers.split(",")]:
                    procs = [start_worker(url, f"m{n}-{i}", model_spec) for i in range(n)]
                    try:
                        asyncio.run(wait_workers(url, n))
                        row = {
                            "workers": n,
                            **asyncio.run(throughput(url, model_spec, args.jobs, args.max_tokens)),
                        }
                    finally:
                        stop(procs)
                    results["throughput"].append(row)
                    print(json.dumps(row), flush=True)
            finally:
                engine.terminate()
                try:
                    engine.wait(60)
                except subprocess.TimeoutExpired:
                    engine.kill()
    finally:
        redis_proc.terminate()
        redis_proc.wait(20)
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
