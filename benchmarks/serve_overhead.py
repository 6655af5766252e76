"""``memdoor serve``: its overhead per request against calling the runner directly, and 20 clients at once.

    .venv/bin/python benchmarks/serve_overhead.py [--pairs N] [--clients C] [--requests R]

Takes about a minute on an idle 2-core machine.

**Overhead.** A zero-latency scripted model answers every call; the sandbox is replaced by one that
passes every test instantly (so the comparison measures orchestration, not candidate start-up, whose
5–120 ms swings would drown a few milliseconds). Each round, in random order: ``solve_problem`` called
directly on the request's problem (what ``memdoor solve`` does), and the same request through the
server — the official ``openai`` client, HTTP on 127.0.0.1, uvicorn, FastAPI, parsing the conversation,
admission, the run, the JSON answer — non-streaming and streaming (to ``[DONE]``). The server runs in a
thread of this process, so the process CPU time per request (``process_time``: client and server
work, robust to the machine's load, unlike wall time) is reported next to wall time. Overhead = server
path minus direct path: median and p95 over the rounds.

**Concurrency.** ``--clients`` clients send ``--requests`` requests each, all at once, to a server with
2 run slots and a queue of 8 (the real sandbox; a scripted model taking 0.2 s per call; clients do not
retry). Every request must come back 200 or 429 — none lost, no other status — and the server's
running + waiting count, polled throughout, must never exceed slots + queue. A second run with a queue
as large as the crowd must answer every request 200.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import openai

from memdoor.core.verdict import TestResult, Verdict
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.run.env import RunEnv
from memdoor.run.solve import solve_problem
from memdoor.server.chat import chat_problem
from memdoor.server.config import ServeConfig
from memdoor.server.launch import BackgroundServer
from memdoor.server.schema import ChatMessage
from memdoor.server.service import solve_config

ANSWER = "```python\ndef add(a, b):\n    return a + b\n```"
PROMPT = "Write `add(a, b)` returning the sum.\n>>> add(1, 2)\n3\n>>> add(2, 2)\n4\n"
MESSAGES = [{"role": "user", "content": PROMPT}]


class InstantSandbox:
    """Passes every test at once: removes candidate start-up from the overhead comparison."""

    name = "instant"

    def run(self, code, tests, *, func_name=None, prelude="none", stop_at_first_failure=True) -> Verdict:
        return Verdict(status="passed", tests=[TestResult(status="passed") for _ in tests], isolation="none")


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.2f} ms, p95 {quantile(values, 0.95) * 1000:7.2f} ms"


class Clock:
    """Wall and process-CPU seconds of a block."""

    def __enter__(self) -> Clock:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0


def overhead(pairs: int, team: str) -> dict[str, dict[str, list[float]]]:
    spec = "scripted:zero"
    pool = ModelPool()
    pool.add(spec, ScriptedModel([ANSWER], spec=spec))
    config = ServeConfig(port=0, models=[spec], teams=[team], trace_dir=None, test_inputs=0)
    sandbox = InstantSandbox()
    direct_env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory())
    strategy = config.team_table()[team]
    solve = solve_config(config, strategy, seed=0, max_tokens=config.max_tokens)
    loop = asyncio.new_event_loop()

    def direct() -> None:
        problem = chat_problem([ChatMessage.model_validate(m) for m in MESSAGES]).problem
        solution = loop.run_until_complete(solve_problem(problem, solve, direct_env))
        assert solution.passed and solution.code

    times: dict[str, dict[str, list[float]]] = {
        k: {"wall": [], "cpu": []} for k in ("direct", "server", "stream")
    }
    with BackgroundServer(config, pool=pool, sandbox=sandbox) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)

        def server() -> None:
            answer = client.chat.completions.create(model=team, messages=MESSAGES)
            assert answer.choices[0].message.content == ANSWER

        def stream() -> None:
            chunks = list(client.chat.completions.create(model=team, messages=MESSAGES, stream=True))
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ANSWER

        ways = {"direct": direct, "server": server, "stream": stream}
        for fn in ways.values():  # warm up: imports, connections, first requests
            fn()
        for _ in range(pairs):
            order = list(ways)
            random.shuffle(order)
            for name in order:
                with Clock() as c:
                    ways[name]()
                times[name]["wall"].append(c.wall)
                times[name]["cpu"].append(c.cpu)
        client.close()
    loop.close()
    return times


async def crowd(clients: int, requests: int, *, slots: int, queue: int) -> dict[str, object]:
    answers = Path(tempfile.mkdtemp(prefix="memdoor-bench-")) / "answers.json"
    answers.write_text(json.dumps({"answers": [ANSWER], "delay": 0.2}))
    spec = f"scripted:{answers}"
    config = ServeConfig(
        port=0, models=[spec], teams=["memdoor/single"], trace_dir=None, concurrency=slots, max_queue=queue
    )
    statuses: Counter[str] = Counter()
    peak = 0
    stop = threading.Event()
    with BackgroundServer(config) as srv:
        health = srv.base_url.removesuffix("/v1") + "/health"

        def poll() -> None:
            nonlocal peak
            with httpx.Client() as h:
                while not stop.is_set():
                    state = h.get(health).json()
                    peak = max(peak, state["running"] + state["waiting"])
                    time.sleep(0.005)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="x", max_retries=0, timeout=300)

        async def one_client() -> None:
            for _ in range(requests):
                try:
                    await client.chat.completions.create(model="memdoor/single", messages=MESSAGES)
                    statuses["200"] += 1
                except openai.APIStatusError as e:
                    statuses[str(e.status_code)] += 1
                except openai.APIError as e:
                    statuses[type(e).__name__] += 1

        started = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        wall = time.perf_counter() - started
        stop.set()
        poller.join()
        await client.close()
    total = clients * requests
    return {
        "sent": total,
        "answered": sum(statuses.values()),
        "statuses": dict(statuses),
        "lost": total - statuses["200"] - statuses["429"],
        "peak_admitted": peak,
        "limit": slots + queue,
        "seconds": round(wall, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=100, help="rounds of the overhead comparison per team")
    ap.add_argument("--clients", type=int, default=20, help="concurrent clients")
    ap.add_argument("--requests", type=int, default=3, help="requests per client")
    args = ap.parse_args()

    for team in ("memdoor/single", "memdoor/parallel-5"):
        t = overhead(args.pairs, team)
        print(f"\n{team}: {args.pairs} rounds, scripted zero-latency model, instant sandbox")
        for name in ("direct", "server", "stream"):
            print(f"  {name:<7} wall {ms(t[name]['wall'])} | cpu {ms(t[name]['cpu'])}")
        for name in ("server", "stream"):
            wall = [s - d for s, d in zip(t[name]["wall"], t["direct"]["wall"], strict=True)]
            cpu = [s - d for s, d in zip(t[name]["cpu"], t["direct"]["cpu"], strict=True)]
            print(f"  overhead {name:<7} wall {ms(wall)} | cpu {ms(cpu)}")

    for slots, queue in ((2, 8), (2, args.clients * args.requests)):
        result = asyncio.run(crowd(args.clients, args.requests, slots=slots, queue=queue))
        print(f"\n{args.clients} clients x {args.requests} requests, {slots} slots, queue {queue}: {result}")
        assert result["lost"] == 0, "a request was lost"
        assert result["peak_admitted"] <= result["limit"], "the queue limit was exceeded"


if __name__ == "__main__":
    main()
