"""Sandboxes shared by the sandbox tests (real isolation: bwrap here, the unshare fallback where asked)."""

from __future__ import annotations

import pytest

from memdoor.sandbox import SandboxConfig, open_sandbox


@pytest.fixture(scope="session")
def sandbox():
    """The default sandbox (isolation auto, LiveCodeBench's 6 s per test)."""
    with open_sandbox(SandboxConfig()) as sb:
        yield sb


@pytest.fixture(scope="session")
def quick_sandbox():
    """A sandbox with a 1.5 s per-test limit, for programs that are meant to run out of time."""
    with open_sandbox(SandboxConfig(timeout_s=1.5)) as sb:
        yield sb
