"""Helpers for distributed-mode tests: a Redis server of our own, `memdoor worker` subprocesses,
scripted answer files and polling. Real processes and a real Redis; nothing mocked."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis.asyncio as aioredis

from memdoor.distributed.jobs import Keys
from memdoor.distributed.remote import RemoteRun
from memdoor.distributed.seed import SeedLeader

SRC = Path(__file__).resolve().parents[2] / "src"

PALINDROME_ANSWER = (
    'Test inputs:\n```input\n"abba"\n```\n```input\n"été"\n```\n```input\n"ab"\n```\n'
    "Code:\n```python\ndef is_palindrome(s: str) -> bool:\n    return s == s[::-1]\n```"
)
"""One scripted answer that fits every step: it holds test inputs and a solution."""

ISSUE_PROMPT = (
    "Write a Python function `is_palindrome(s: str) -> bool` that returns True for palindrome strings, "
    "handling Unicode correctly."
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith((b"+PONG", b"-NOAUTH"))  # up (a password may be required)
    except OSError:
        return False


class RedisServer:
    """A redis-server of the test's own on loopback (so restarting it hurts nobody)."""

    def __init__(
        self,
        workdir: Path,
        *,
        persist: bool = False,
        port: int | None = None,
        extra: tuple[str, ...] = (),
    ):
        """``extra``: more redis-server options (e.g. ``--requirepass``, the ``--tls-*`` ones)."""
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed")
        self.exe, self.workdir, self.persist, self.extra = exe, workdir, persist, extra
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        )
        self.proc = subprocess.Popen(
            [
                self.exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                *persistence,
                "--dir",
                str(self.workdir),
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not _answers(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError("could not start redis-server for the test")
            time.sleep(0.05)
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None


def scripted_file(path: Path, answers: list[str], delay: float = 0.0) -> str:
    """A scripted model spec whose calls answer ``answers`` in turn, each after ``delay`` seconds."""
    path.write_text(json.dumps({"answers": answers, "delay": delay}))
    return f"scripted:{path}"


class WorkerProc:
    """One `memdoor worker` subprocess; its log (stderr) is kept in a file for assertions and failures."""

    def __init__(
        self,
        log_dir: Path,
        agent_id: str,
        model: str | None,
        redis_url: str,
        *args: str,
        role: str = "all",
        prefix: str = "memdoor:",
        env: dict[str, str] | None = None,
    ):
        self.agent_id = agent_id
        self.log_path = log_dir / f"{agent_id}.log"
        cmd = [
            sys.executable,
            "-m",
            "memdoor",
            "worker",
            "--redis",
            redis_url,
            "--agent-id",
            agent_id,
            "--role",
            role,
            "--prefix",
            prefix,
            *args,
        ]
        if model:
            cmd += ["--model", model]
        full_env = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
        for name in ("REDIS_URL", "AGENT_ID", "MODEL_NAME", "MEMDOOR_ROLE"):
            if env is None or name not in env:
                full_env.pop(name, None)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in wait()/kill()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._log, env=full_env)

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def wait(self, timeout: float = 120) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._log.close()

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit in time (test cleanup)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.proc.returncode


def wait_for(
    check: Callable[[], Any], timeout: float, what: str, *, every: float = 0.1, procs: list[WorkerProc] = ()
) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` (with worker logs) after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {p.agent_id}\n{p.log[-3000:]}" for p in procs)
            pytest.fail(f"timed out waiting for {what}\n{logs}")
        time.sleep(every)


class ChatEndpoint:
    """An OpenAI-compatible endpoint on loopback answering every chat completion with PALINDROME_ANSWER
    (after ``I am <model>`` with ``say_model``). With ``user``/``password``: HTTP 401 for any request
    without those Basic credentials."""

    def __init__(self, *, user: str | None = None, password: str = "", say_model: bool = False) -> None:
        wanted = None if user is None else "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                return

            def do_POST(self) -> None:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                status, body = (
                    (401, {"error": {"message": "bad credentials"}})
                    if (wanted is not None and self.headers.get("Authorization") != wanted)
                    else (200, completion(f"I am {req['model']}\n" * say_model + PALINDROME_ANSWER))
                )
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (("Content-Type", "application/json"), ("Content-Length", str(len(data)))):
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(content: str) -> dict[str, Any]:
    """A chat completion body of one choice saying ``content``."""
    return {
        "id": "chat-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def one_call(remote: RemoteRun, spec: str) -> str:
    """The text of one call of ``spec`` through the workers (``remote`` is closed after it)."""

    async def call() -> str:
        try:
            return (
                (await remote.model(spec).complete([{"role": "user", "content": "hi"}])).completions[0].text
            )
        finally:
            await remote.aclose()

    return asyncio.run(call())


def work_tally(port: int, run: str) -> dict[str, int]:
    """The answer's ``workers`` tally of ``run`` as a lead counts it from the work log in the Redis at ``port``."""

    async def tally() -> dict[str, int]:
        client = aioredis.Redis(host="127.0.0.1", port=port)
        try:
            return await SeedLeader._workers_of(SimpleNamespace(redis=client, keys=Keys()), run)
        finally:
            await client.aclose()

    return asyncio.run(tally())
