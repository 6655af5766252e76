"""Helpers for distributed-mode tests: a Redis server of our own, `memdoor worker` subprocesses,
scripted answer files and polling. Real processes and a real Redis; nothing mocked."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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
