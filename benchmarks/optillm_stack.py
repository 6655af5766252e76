"""The running parts of benchmarks/optillm_rows.py: Memdoor's engine serving the catalog model, the metering
relay (optillm_meter.py) and the optillm proxy in its own virtualenv; ``serve`` keeps them up until SIGINT or
SIGTERM, ``smoke`` sends one short request per approach through memdoor's own ``openai`` backend and reports
what came back. Both stop everything they started."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from optillm_approaches import optillm_spec, parse_approaches, proxy_url
from optillm_meter import Meter, Relay, Upstream

from memdoor.core.errors import ModelError, UsageError
from memdoor.models.catalog import get_entry
from memdoor.models.engine import Engine, EngineConfig
from memdoor.models.openai_model import OpenAIModel
from memdoor.models.weights import WeightsStore

KEPT_ENV = ("PATH", "HOME", "LANG", "TMPDIR")
"""The only variables the proxy gets from the environment: no tokens, provider keys, its own settings
(they choose its client) or web proxies reach a third-party program."""


def proxy_env(environ: dict[str, str]) -> dict[str, str]:
    """optillm's environment: :data:`KEPT_ENV` (those set), a placeholder key, which makes it use its
    OpenAI client (pointed at the relay by ``--base-url``; the relay sends no client header on), and no
    proxy for the local relay."""
    env = {k: environ[k] for k in KEPT_ENV if k in environ}
    env["OPENAI_API_KEY"] = "local-server-no-key"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 120.0) -> None:
    """Until ``url`` answers 200; UsageError with the log's tail when the process ends or time runs out."""
    probe = Upstream(url, timeout=5.0)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if probe.send("GET", "")[0] == 200:
            return
        time.sleep(0.5)
    tail = " | ".join(log.read_text(errors="replace").splitlines()[-3:]) if log.exists() else ""
    raise UsageError(f"optillm did not come up at {url} (see {log}): {tail}")


@contextlib.contextmanager
def stack(args: argparse.Namespace) -> Iterator[Meter]:
    """The engine, the relay and optillm, up; all stopped on the way out."""
    binary = args.venv / "bin" / "optillm"
    if not binary.is_file():
        raise UsageError(f"no optillm in {args.venv}: run `optillm_rows.py install --venv {args.venv}` first")
    args.logs.mkdir(parents=True, exist_ok=True)
    path = WeightsStore().ensure(get_entry(args.model))
    key = secrets.token_hex(16)  # only the relay may use the engine
    config = EngineConfig(slots=args.slots, replicas=1, threads=args.threads, ctx=args.ctx)
    engine = Engine(path, config, api_key=key)
    proxy_port = free_port()
    meter = Meter(
        Upstream(engine.start(), engine.headers(), timeout=config.timeout),
        Upstream(f"http://127.0.0.1:{proxy_port}", timeout=float(7200)),
        args.logs / "meter.jsonl",
    )
    relay, proc = None, None
    try:
        try:
            relay = Relay(meter, front_port=args.port)
        except OSError as e:
            raise UsageError(
                f"cannot serve on 127.0.0.1:{args.port}: {e.strerror} (another --port?)"
            ) from None
        _, back = relay.start()
        log = args.logs / "optillm.log"
        workdir = args.logs / "cwd"  # optillm runs plugins from ./optillm/plugins: an empty directory of ours
        workdir.mkdir(exist_ok=True)
        command = [
            str(binary),
            "--base-url",
            proxy_url(back),
            "--host",
            "127.0.0.1",
            "--port",
            str(proxy_port),
        ]
        with log.open("ab") as out:
            proc = subprocess.Popen(
                command, cwd=workdir, env=proxy_env(dict(os.environ)), stdout=out, stderr=subprocess.STDOUT
            )
        wait_healthy(f"http://127.0.0.1:{proxy_port}/health", proc, log)
        yield meter
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if relay is not None:
            relay.stop()
        engine.stop()


def serve(args: argparse.Namespace, rows_text: str) -> None:
    """Up until SIGINT or SIGTERM; prints the rows once everything answers."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with stack(args):
        print(rows_text, flush=True)
        stop.wait()


SMOKE_MESSAGES = [
    {"role": "system", "content": "You are an expert Python programmer."},
    {
        "role": "user",
        "content": "Write a Python function `add(a, b)` that returns the sum of a and b. "
        "Answer with the code in a ```python block.",
    },
]


async def _one(spec: str, max_tokens: int) -> dict[str, Any]:
    model = OpenAIModel.from_spec(spec)
    started = time.monotonic()
    try:
        resp = await model.complete(
            SMOKE_MESSAGES, max_tokens=max_tokens, temperature=0.2, logprobs=True, seed=0
        )
    except ModelError as e:
        return {"ok": False, "error": str(e), "seconds": round(time.monotonic() - started, 1)}
    finally:
        await model.aclose()
    return {
        "ok": True,
        "seconds": round(time.monotonic() - started, 1),
        "memdoor_usage": {"prompt": resp.usage.prompt_tokens, "completion": resp.usage.completion_tokens},
        "answer_head": (resp.completions[0].text if resp.completions else "")[:160],
    }


def _direct(meter: Meter, n: int, max_tokens: int) -> dict[str, Any]:
    """One request straight to the engine: its usage against its token counters (n > 1 included)."""
    before = meter.engine.metrics() or {}
    body = {"messages": SMOKE_MESSAGES, "max_tokens": max_tokens, "n": n, "temperature": 1.0}
    status, _, reply = meter.engine.send("POST", "/v1/chat/completions", json.dumps(body).encode())
    after = meter.engine.metrics() or {}
    data = json.loads(reply) if reply.startswith(b"{") else {}
    return {
        "n": n,
        "status": status,
        "choices": len(data.get("choices") or []),
        "usage": data.get("usage"),
        "server_generated": {k: after.get(k, 0) - before.get(k, 0) for k in after if k.endswith("_total")},
        "error": data.get("error"),
    }


def smoke(args: argparse.Namespace) -> None:
    """One request per approach (``max_tokens`` = ``--smoke-tokens``, no retries), then a report."""
    approaches = parse_approaches(args.approaches)
    report: dict[str, Any] = {"model": args.model, "max_tokens": args.smoke_tokens, "approaches": {}}
    with stack(args) as meter:
        report["direct"] = [_direct(meter, 1, args.smoke_tokens), _direct(meter, 3, args.smoke_tokens)]
        for approach in approaches:
            spec = optillm_spec(approach, args.model, args.port).removeprefix("openai:") + "&max_retries=0"
            result = asyncio.run(_one(spec, args.smoke_tokens))
            lines = meter.log.read_text().splitlines()
            last = json.loads(lines[-1]) if lines else {}
            result["meter"] = last if last.get("model") == f"{approach}-{args.model}" else None
            report["approaches"][approach] = result
            print(json.dumps({approach: result}), flush=True)
    out = args.logs / f"smoke-{args.model}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"report: {out}")
