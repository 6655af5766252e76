"""Team model ids (memdoor/<strategy>-<agents>) and the run slots / waiting queue."""

from __future__ import annotations

import asyncio

import pytest

from memdoor.core.errors import UsageError
from memdoor.run.config import StrategySpec
from memdoor.server.admission import Admission
from memdoor.server.config import ServeConfig
from memdoor.server.errors import QueueFull
from memdoor.server.launch import check_bind
from memdoor.server.teams import DEFAULT_TEAMS, parse_team, team_id, team_table


@pytest.mark.parametrize(
    ("text", "name", "agents", "canonical"),
    [
        ("memdoor/single", "single", 1, "memdoor/single"),
        ("memdoor/single-1", "single", 1, "memdoor/single"),
        ("memdoor/parallel-5", "parallel", 5, "memdoor/parallel-5"),
        ("sequential:2", "sequential", 2, "memdoor/sequential-2"),
        ("single", "single", 1, "memdoor/single"),
    ],
)
def test_team_ids_round_trip(text, name, agents, canonical):
    spec = parse_team(text)
    assert spec == StrategySpec(name=name, agents=agents)
    assert team_id(spec) == canonical
    assert parse_team(team_id(spec)) == spec


@pytest.mark.parametrize(
    "text",
    ["memdoor/parallel", "memdoor/swarm-3", "memdoor/parallel-0", "memdoor/parallel-99", "hybrid", "gpt-4o"],
)
def test_bad_team_names(text):
    with pytest.raises(UsageError):
        parse_team(text)


def test_default_teams_cover_every_strategy_once():
    table = team_table(DEFAULT_TEAMS)
    assert list(table) == list(DEFAULT_TEAMS)
    assert sorted(s.name for s in table.values()) == ["hybrid", "parallel", "sequential", "shared", "single"]
    assert list(team_table(["parallel:3", "memdoor/parallel-3"])) == ["memdoor/parallel-3"]


def test_config_rejects_bad_teams():
    with pytest.raises(ValueError, match="give the team size"):
        ServeConfig(teams=["memdoor/parallel"])


async def test_admission_counts_running_and_waiting():
    adm = Admission(slots=1, queue=1, retry_after_s=3)
    a, b = adm.admit(), adm.admit()
    with pytest.raises(QueueFull) as e:
        adm.admit()
    assert e.value.headers()["retry-after"] == "3"
    entered = asyncio.Event()

    async def hold(ticket, gate):
        async with ticket.slot():
            entered.set()
            await gate.wait()
        ticket.release()

    gate = asyncio.Event()
    first = asyncio.create_task(hold(a, gate))
    await entered.wait()
    second = asyncio.create_task(hold(b, gate))
    await asyncio.sleep(0)
    assert (adm.running, adm.waiting) == (1, 1)
    gate.set()
    await asyncio.gather(first, second)
    assert (adm.running, adm.waiting) == (0, 0)
    b.release()  # releasing twice changes nothing
    adm.admit(), adm.admit()
    with pytest.raises(QueueFull):
        adm.admit()


def test_loopback_rule():
    with pytest.raises(UsageError, match="without a token"):
        check_bind(ServeConfig(host="0.0.0.0"))
    check_bind(ServeConfig(host="0.0.0.0", token="t"))  # a token allows any address
    check_bind(ServeConfig(host="localhost"))
