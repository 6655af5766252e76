"""Shared fixtures: the developers' benchmark data (skip when absent) and a real Redis server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    env = os.environ.get("MEMDOOR_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (or $MEMDOOR_SHARED_DATA); the test is skipped when it is absent."""
    path = _shared_data()
    if not (path / "leetcode_2024_dev.jsonl").exists():
        pytest.skip(f"benchmark data not found at {path}")
    return path


def _reachable(host: str, port: int) -> bool:
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
    deadline = time.monotonic() + 10
    while not _reachable("127.0.0.1", port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("could not start redis-server for the tests")
        time.sleep(0.05)
    return proc, port


@pytest.fixture(scope="session")
def redis_url():
    """A real Redis: $MEMDOOR_TEST_REDIS, else 127.0.0.1:6379 if it answers, else one started for the session.

    Tests must use their own key prefixes or databases; they never flush a server they did not start.
    """
    env = os.environ.get("MEMDOOR_TEST_REDIS")
    if env:
        yield env
        return
    if _reachable("127.0.0.1", 6379):
        yield "redis://127.0.0.1:6379/0"
        return
    proc, port = start_redis_server()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
