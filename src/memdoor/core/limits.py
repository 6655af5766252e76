"""Limits on what a run may ask for, the same however it is asked (command line, seed task, run plan)."""

from __future__ import annotations

from memdoor.core.errors import UsageError

MAX_AGENTS = 64
"""Largest team (``--agents``, ``parallel:N``, a seed task's ``agents`` or strategy)."""


def check_team_size(agents: int, text: str) -> None:
    """UsageError when a strategy spec such as ``parallel:1000`` asks for more than MAX_AGENTS agents."""
    if agents > MAX_AGENTS:
        raise UsageError(f"bad strategy {text!r}: a team has at most {MAX_AGENTS} agents")
