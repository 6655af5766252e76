"""Team model ids: how a client names a team, ``memdoor/<strategy>-<agents>``.

``memdoor/parallel-5`` is the ``parallel`` strategy with five agents, ``memdoor/sequential-3`` an
author and two reviewers taking turns, and ``memdoor/single`` (also accepted as ``memdoor/single-1``) one agent, one
attempt — the baseline. The agents' models are the server's ``--model`` specs, assigned round-robin.
"""

from __future__ import annotations

import re

from memdoor.core.errors import UsageError
from memdoor.run.config import StrategySpec

PREFIX = "memdoor/"

DEFAULT_TEAMS: tuple[str, ...] = (
    "memdoor/single",
    "memdoor/parallel-5",
    "memdoor/sequential-3",
    "memdoor/shared-3",
    "memdoor/hybrid-5",
)
"""The teams a server lists when none are configured: every strategy once (in ``sequential-3`` one
agent writes and the two others take turns reviewing)."""

MAX_AGENTS = 16
"""The largest team a model id may name (a guard against ``memdoor/parallel-5000``)."""

_ID = re.compile(r"^memdoor/([a-z]+)(?:-(\d+))?$")


def team_id(spec: StrategySpec) -> str:
    """The model id of a team: ``memdoor/single`` for one single agent, else ``memdoor/<name>-<agents>``."""
    if spec.name == "single" and spec.agents == 1:
        return f"{PREFIX}single"
    return f"{PREFIX}{spec.name}-{spec.agents}"


def parse_team(text: str) -> StrategySpec:
    """A team from its model id (``memdoor/parallel-5``) or a strategy spec (``parallel:5``).

    A UsageError names the problem: unknown strategy, missing or bad size, too many agents.
    """
    text = text.strip()
    if text.startswith(PREFIX):
        m = _ID.match(text)
        if m is None:
            raise UsageError(
                f"bad team name {text!r}: expected memdoor/<strategy>-<agents>, e.g. memdoor/parallel-5"
            )
        name, count = m.group(1), m.group(2)
        if count is None and name != "single":
            raise UsageError(f"bad team name {text!r}: give the team size, e.g. {PREFIX}{name}-3")
        spec = StrategySpec.parse(name if count is None else f"{name}:{count}")
    else:
        spec = StrategySpec.parse(text)
        if ":" not in text and spec.name != "single":
            raise UsageError(f"bad team {text!r}: give the team size, e.g. {spec.name}:3")
    if spec.agents > MAX_AGENTS:
        raise UsageError(f"bad team {text!r}: at most {MAX_AGENTS} agents")
    return spec


def team_table(names: list[str] | tuple[str, ...]) -> dict[str, StrategySpec]:
    """Model id → strategy for the configured teams, in the given order, without duplicates."""
    table: dict[str, StrategySpec] = {}
    for name in names:
        spec = parse_team(name)
        table.setdefault(team_id(spec), spec)
    return table
