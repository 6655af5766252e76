"""Fixtures for the server tests: the real sandbox, opened once."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sandbox():
    """The real sandbox (bwrap or unshare), as the server uses it."""
    from memdoor.sandbox import SandboxConfig, open_sandbox

    box = open_sandbox(SandboxConfig())
    yield box
    close = getattr(box, "close", None)
    if close is not None:
        close()
