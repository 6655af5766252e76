"""A throwaway redis-server for tests (imported by conftest.py and by tests that restart their own)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

import pytest


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis_server(port: int | None = None) -> tuple[subprocess.Popen, int]:
    """Start a throwaway redis-server on loopback (no persistence); returns (process, port)."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed")
    port = port or _free_port()
    workdir = tempfile.mkdtemp(prefix="memdoor-redis-")
    proc = subprocess.Popen(
        [
            exe,
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
    deadline = time.monotonic() + 60  # a loaded machine can take a while to start it
    while not reachable("127.0.0.1", port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("could not start redis-server for the tests")
        time.sleep(0.05)
    return proc, port
