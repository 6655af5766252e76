"""What a bench run is: its rows (strategy × models), problem filters, budget and seed.

The *identity* of a run (everything that changes results) decides whether a results directory
can be resumed: same identity → resume, another identity → refused. How fast it runs
(``--concurrency``) and where the suite file lives are not part of it.
"""

from __future__ import annotations

import json
from datetime import date

from pydantic import BaseModel, Field

from memdoor.errors import UsageError
from memdoor.models.pool import split_spec

DIFFICULTIES = ("easy", "medium", "hard")


class RowSpec(BaseModel):
    """One row of the results table: a strategy run by a list of model specs."""

    name: str = Field(
        description="Row name: the strategy as in LIST (``parallel:5``), or ``STRATEGY@MODEL``."
    )
    strategy: str = Field(description="Normalised strategy spec, e.g. ``parallel:5`` or ``single``.")
    models: list[str] = Field(description="Model specs the team's agents use, round-robin.")
    baseline: bool = Field(default=False, description="True for --baseline rows (a comparison model).")


class ProblemFilter(BaseModel):
    """Which problems of the suite run. Every filter is inclusive; unset filters keep everything."""

    difficulty: list[str] | None = Field(
        default=None, description="Keep problems of these difficulties (unknown difficulty is dropped)."
    )
    since: date | None = Field(default=None, description="Keep problems released on or after this date.")
    until: date | None = Field(default=None, description="Keep problems released on or before this date.")
    limit: int | None = Field(
        default=None, description="Keep the first N after filtering, in the suite's file order."
    )


class BenchConfig(BaseModel):
    """Everything that defines a bench run's results."""

    suite: str = Field(description="The SUITE argument: a problem file or folder, or ``humaneval``.")
    rows: list[RowSpec] = Field(description="Strategy rows in LIST order, then baselines in flag order.")
    filters: ProblemFilter = Field(default_factory=ProblemFilter, description="Problem selection.")
    budget_tokens: int | None = Field(
        default=None, description="Token budget per problem and row (equal for every row), or unlimited."
    )
    seed: int = Field(default=0, description="Base sampling seed handed to every row.")
    max_tokens: int = Field(default=1024, description="Completion token cap per model call.")

    def identity(self) -> dict:
        """The fields that must match for a results directory to be resumed (the suite path is not one:
        the selected problems' content digest stands for it)."""
        return self.model_dump(mode="json", exclude={"suite"})

    def identity_json(self) -> str:
        return json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))

    @property
    def row_names(self) -> list[str]:
        return [r.name for r in self.rows]


def parse_strategy(text: str) -> str:
    """Validate and normalise one strategy spec (``parallel:5``) with the runner's parser."""
    from memdoor.runner import StrategySpec

    return str(StrategySpec.parse(text.strip()))


def parse_rows(strategies: str, models: list[str], baselines: list[str]) -> list[RowSpec]:
    """Rows from ``--strategies LIST``, ``--model`` specs and ``--baseline STRATEGY@SPEC`` flags.

    Raises UsageError for an empty or unknown strategy, duplicate rows, or no model; ModelSpecError
    for a spec whose syntax or backend is wrong (without opening any model).
    """
    if not models:
        raise UsageError("bench needs at least one --model SPEC")
    for spec in models:
        split_spec(spec)
    items = [s.strip() for s in strategies.split(",")]
    if not strategies.strip() or any(not s for s in items):
        raise UsageError(
            f"bad --strategies {strategies!r}: expected a comma-separated list like single,parallel:5"
        )
    rows = [RowSpec(name=(s := parse_strategy(item)), strategy=s, models=list(models)) for item in items]
    for text in baselines:
        strategy, sep, model = text.partition("@")
        if not sep or not strategy.strip() or not model.strip():
            raise UsageError(
                f"bad --baseline {text!r}: expected STRATEGY@MODEL, e.g. single@local:qwen2.5-coder-1.5b"
            )
        split_spec(model.strip())
        s = parse_strategy(strategy)
        rows.append(RowSpec(name=f"{s}@{model.strip()}", strategy=s, models=[model.strip()], baseline=True))
    seen: set[str] = set()
    for row in rows:
        if row.name in seen:
            raise UsageError(f"row {row.name!r} is given twice")
        seen.add(row.name)
    return rows


def parse_difficulty(text: str | None) -> list[str] | None:
    """``easy,hard`` → ``["easy", "hard"]``; UsageError for anything but easy, medium, hard."""
    if text is None:
        return None
    wanted = [d.strip().lower() for d in text.split(",") if d.strip()]
    bad = [d for d in wanted if d not in DIFFICULTIES]
    if bad or not wanted:
        raise UsageError(f"bad --difficulty {text!r}: choose from {','.join(DIFFICULTIES)}")
    return [d for d in DIFFICULTIES if d in wanted]


def parse_date(flag: str, text: str | None) -> date | None:
    """An ISO date (``2024-05-01``) or None; UsageError naming the flag otherwise."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"bad {flag} {text!r}: expected a date like 2024-05-01") from None
