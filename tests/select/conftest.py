"""Fixtures for selector tests: the real sandbox, opened once."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sandbox():
    """The real sandbox (bwrap or unshare), as Memdoor uses it."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    return open_sandbox(SandboxConfig())


@pytest.fixture(scope="session")
def quick_sandbox():
    """A real sandbox with a 2 s per-test limit, for candidates that are meant to run out of time."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    return open_sandbox(SandboxConfig(timeout_s=2.0))
