"""The first-run demo: one agent alone against a team, on the same few problems, side by side.

It is a tiny bench (the same loop, store and paired draws as ``memdoor bench``): two rows, ``single``
and a team, on the demo problems shipped with the package (``memdoor/data/demo_problems.yaml``,
written for Memdoor; hidden tests grade the answers). The team's agent 0 makes the single agent's
request, so that draft is computed once and the team is charged it too: the comparison is paired,
and what the team adds is what it did beyond that draft. Results go to a results directory like any
bench (a temporary one by default), so ``memdoor report`` and ``memdoor trace`` work on them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.records import ResultRecord

DEMO_FILE = "demo_problems.yaml"


def demo_problems_path() -> Path:
    """The demo problems shipped in the package."""
    return Path(str(resources.files("memdoor") / "data" / DEMO_FILE))


def demo_config(suite: str, model: str, team: str, *, seed: int = 0, max_tokens: int = 512) -> BenchConfig:
    """Two rows on ``suite``: ``single`` and ``team`` (e.g. ``hybrid:3``), both of ``model``."""
    return BenchConfig(
        suite=suite, rows=parse_rows(f"single,{team}", [model], []), seed=seed, max_tokens=max_tokens
    )


class RowOutcome(BaseModel):
    """One row on one problem, as the demo shows it."""

    passed: bool = Field(description="The answer passed the hidden tests.")
    error: str | None = Field(default=None, description="Why the run failed, when it did.")
    tokens: int = Field(description="Prompt + completion tokens of every call.")
    compute: float | None = Field(description="FLOPs ≈ 2 × parameters × tokens (None: size unknown).")
    seconds: float = Field(description="Wall seconds of the run.")
    did: str = Field(description="What the row did, in words: calls by role, the vote, the stop reason.")


class ProblemOutcome(BaseModel):
    problem_id: str
    single: RowOutcome
    team: RowOutcome


def _did(result: ResultRecord) -> str:
    """``5 calls (3 draft, 2 repair); vote: majority, 2 of 3 agree`` from the stored ledger and selection."""
    roles: Counter[str] = Counter()
    if result.ledger_json:
        for call in json.loads(result.ledger_json).get("calls", []):
            roles[call.get("role", "call")] += 1
    parts = [f"{result.calls} call{'s' * (result.calls != 1)}"]
    if result.calls > 1 and roles:
        parts[0] += " (" + ", ".join(f"{n} {role}" for role, n in roles.items()) + ")"
    selection = json.loads(result.solution_json).get("selection") if result.solution_json else None
    if selection and selection.get("groups"):
        groups = selection["groups"]
        chosen = next((g for g in groups if selection.get("index") in g), [])
        n = len(json.loads(result.solution_json).get("candidates") or []) or sum(len(g) for g in groups)
        parts.append(f"vote: {selection.get('rule') or selection.get('reason')}, {len(chosen)} of {n} agree")
    if result.stopped and result.stopped != "done":
        parts.append(f"stopped: {result.stopped}")
    return "; ".join(parts)


def row_outcome(result: ResultRecord) -> RowOutcome:
    return RowOutcome(
        passed=result.passed,
        error=result.error if result.status == "error" else None,
        tokens=result.prompt_tokens + result.completion_tokens,
        compute=result.compute,
        seconds=result.wall_seconds,
        did=_did(result),
    )


def outcomes(results: Sequence[ResultRecord], team_row: str) -> list[ProblemOutcome]:
    """Per problem (in order), the single row beside the team row; problems missing either are left out."""
    by: dict[str, dict[str, ResultRecord]] = {}
    for r in results:
        by.setdefault(r.problem_id, {})[r.row] = r
    return [
        ProblemOutcome(problem_id=pid, single=row_outcome(rows["single"]), team=row_outcome(rows[team_row]))
        for pid, rows in by.items()
        if "single" in rows and team_row in rows
    ]


def verdict(problems: Sequence[ProblemOutcome]) -> str:
    """The honest one-line summary: did the team help here, and at what cost."""
    if not problems:
        return "nothing finished"
    single = sum(p.single.passed for p in problems)
    team = sum(p.team.passed for p in problems)
    gained = sum(p.team.passed and not p.single.passed for p in problems)
    lost = sum(p.single.passed and not p.team.passed for p in problems)
    cost = _ratio([p.team.compute for p in problems], [p.single.compute for p in problems], "compute")
    cost = cost or _ratio([p.team.tokens for p in problems], [p.single.tokens for p in problems], "tokens")
    secs = _ratio([p.team.seconds for p in problems], [p.single.seconds for p in problems], "seconds")
    n = len(problems)
    head = f"single agent {single}/{n}, team {team}/{n}"
    spend = ", ".join(x for x in (cost, secs) if x)
    if gained and not lost:
        return f"{head}: the team solved {gained} problem{'s' * (gained > 1)} the single agent missed, at {spend}."
    if gained or lost:
        return f"{head}: the team won {gained} and lost {lost} against the single agent, at {spend}."
    if team == n:
        return f"{head}: both solved everything here, so the team only added cost ({spend})."
    return f"{head}: the team did not help on these problems ({spend}); small models often share the same mistakes."


def _ratio(team: Sequence[float | None], single: Sequence[float | None], what: str) -> str | None:
    if any(v is None for v in (*team, *single)):
        return None
    a, b = sum(team), sum(single)  # type: ignore[arg-type]
    return f"{a / b:.1f}× the {what}" if b else None
