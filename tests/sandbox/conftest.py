"""Sandboxes of the sandbox tests (real isolation: bwrap here, the unshare fallback where asked). The default
one is the shared ``sandbox`` fixture of tests/conftest.py."""

from __future__ import annotations

import pytest

from memdoor.sandbox import SandboxConfig, open_sandbox


@pytest.fixture(scope="session")
def quick_sandbox():
    """A sandbox with a 1.5 s per-test limit, for programs that are meant to run out of time."""
    with open_sandbox(SandboxConfig(timeout_s=1.5)) as sb:
        yield sb
