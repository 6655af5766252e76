"""Fixtures for selector tests (the real sandbox is the shared ``sandbox`` fixture of tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def quick_sandbox():
    """A real sandbox with a 2 s per-test limit, for candidates that are meant to run out of time."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig(timeout_s=2.0)) as box:
        yield box
