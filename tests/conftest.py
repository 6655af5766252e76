"""Shared fixtures: the real sandbox, the developers' benchmark data (skip when absent), a real Redis server and
the real embedded 0.5B model's spec (skip when its weights are not installed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redis_helpers import reachable, start_redis_server

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    env = os.environ.get("MEMDOOR_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def sandbox():
    """The real sandbox (bwrap or unshare, default settings), as Memdoor uses it; opened once, closed at
    the end (the sandboxes it started ahead hold uids)."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig()) as box:
        yield box


@pytest.fixture(scope="session")
def quick_sandbox():
    """A real sandbox with a 1.5 s per-test limit, for programs that are meant to run out of time; opened
    once, closed at the end."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig(timeout_s=1.5)) as box:
        yield box


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (or $MEMDOOR_SHARED_DATA); the test is skipped when it is absent."""
    path = _shared_data()
    if not (path / "leetcode_2024_dev.jsonl").exists():
        pytest.skip(f"benchmark data not found at {path}")
    return path


@pytest.fixture(scope="session")
def small_model() -> str:
    """``local:qwen2.5-coder-0.5b``, the embedded model of the slow tier; the test is skipped when its engine
    or weights are not installed (``scripts/test.sh`` installs both)."""
    pytest.importorskip("xllamacpp")
    from memdoor.models.catalog import get_entry
    from memdoor.models.weights import WeightsStore, find_parts

    entry = get_entry("qwen2.5-coder-0.5b")
    if not WeightsStore().is_verified(entry) and not find_parts(entry).complete:
        pytest.skip(f"{entry.name} weights not installed ({entry.install_hint})")
    return f"local:{entry.name}"


@pytest.fixture(scope="session")
def redis_url():
    """A real Redis: $MEMDOOR_TEST_REDIS, else 127.0.0.1:6379 if it answers, else one started for the session.

    Tests must use their own key prefixes or databases; they never flush a server they did not start.
    """
    env = os.environ.get("MEMDOOR_TEST_REDIS")
    if env:
        yield env
        return
    if reachable("127.0.0.1", 6379):
        yield "redis://127.0.0.1:6379/0"
        return
    proc, port = start_redis_server()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
