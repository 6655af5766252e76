"""The ``best`` team preset: the configuration a measurement says solves the most within a compute budget.

``memdoor solve ... --team best --budget-compute X`` picks, among the rows of a bench run whose models
the user has, the one that solved the most at a mean compute per problem of at most X (ties to the
cheaper) — a point on that run's measured cost–accuracy frontier — and says which run it comes from.
The run is the measurement shipped with memdoor (:data:`SHIPPED`, made from a committed results
directory by :func:`measurement`), or the user's own bench directory (``--from DIR``: any models,
remote ones included, with the sizes the run was given). A measurement holds for the suite it was made on;
it does not say a cascade saves compute on other problems (measure your own with ``memdoor bench``).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from memdoor.bench.analysis import Analysis, analyse
from memdoor.bench.store import ResultsStore
from memdoor.core.errors import UsageError

SHIPPED = "presets/humaneval.json"
"""The measurement shipped with memdoor (beside this module)."""


class MeasuredRow(BaseModel):
    """One configuration as a bench run measured it."""

    name: str = Field(description="Row name in the run.")
    strategy: str = Field(description="Strategy spec, e.g. ``cascade:5``.")
    models: list[str] = Field(description="Model spec per agent (one spec: every agent).")
    options: dict[str, Any] = Field(default_factory=dict, description="Strategy options the row set.")
    languages: list[str] = Field(
        default_factory=list, description="Agents' languages (empty: the problem's)."
    )
    solved: int = Field(description="Problems solved.")
    total: int = Field(description="Problems with a result.")
    compute_per_problem: float = Field(description="Mean FLOPs per problem.")


class Measurement(BaseModel):
    """The rows of one bench run with known compute, and where they come from."""

    source: str = Field(description="The results directory the measurement was made from.")
    suite: str = Field(description="The suite it ran on.")
    created_at: str = Field(description="When the run started.")
    budget_compute: float | None = Field(description="The run's compute budget per problem and row.")
    max_tokens: int = Field(description="The run's completion token cap per call.")
    seed: int = Field(description="The run's base sampling seed.")
    params: dict[str, float] = Field(default_factory=dict, description="Model sizes the run was given.")
    rows: list[MeasuredRow] = Field(description="Rows with results and a known compute, in run order.")


def measurement(analysis: Analysis, source: str) -> Measurement:
    """The measurement of an analysed run (rows of unknown compute left out)."""
    config = analysis.run.config
    specs = {r.name: r for r in config.rows}
    rows = [
        MeasuredRow(
            name=r.name,
            strategy=r.strategy,
            models=r.models,
            options=specs[r.name].options,
            languages=specs[r.name].languages,
            solved=r.solved,
            total=r.total,
            compute_per_problem=r.compute_per_problem,
        )
        for r in analysis.rows
        if r.total and r.compute_per_problem is not None
    ]
    return Measurement(
        source=source,
        suite=config.suite,
        created_at=analysis.run.created_at,
        budget_compute=config.budget_compute,
        max_tokens=config.max_tokens,
        seed=config.seed,
        params=config.params,
        rows=rows,
    )


def shipped() -> Measurement:
    """The measurement shipped with memdoor."""
    text = (resources.files(__package__) / SHIPPED).read_text(encoding="utf-8")
    return Measurement.model_validate_json(text)


def from_directory(directory: str) -> Measurement:
    """The measurement of a bench results directory (``--from DIR``); ResultsStoreError when it is none."""
    with ResultsStore.open(directory) as store:
        analysis = analyse(store, resamples=100)
    return measurement(analysis, str(Path(directory)))


def choose(m: Measurement, budget: float, usable: Callable[[list[str]], bool]) -> MeasuredRow:
    """The row that solved the most at a mean compute of at most ``budget``, among those whose models are
    ``usable`` (ties to the cheaper, then the earlier); UsageError naming the cheapest otherwise."""
    rows = [r for r in m.rows if usable(r.models)]
    if not rows:
        raise UsageError(f"no configuration measured in {m.source} uses only models you have")
    fits = [(i, r) for i, r in enumerate(rows) if r.compute_per_problem <= budget]
    if not fits:
        cheapest = min(rows, key=lambda r: r.compute_per_problem)
        raise UsageError(
            f"--budget-compute {budget:g}: no configuration measured in {m.source} costs that little; the "
            f"cheapest is {cheapest.name} at {cheapest.compute_per_problem:.3g} FLOPs per problem"
        )
    return min(fits, key=lambda ir: (-ir[1].solved / ir[1].total, ir[1].compute_per_problem, ir[0]))[1]


def describe(row: MeasuredRow, m: Measurement, budget: float) -> str:
    """One line saying what was chosen and which measurement it comes from."""
    return (
        f"team best at ≤ {budget:g} FLOPs per problem: {row.name} — solved {row.solved}/{row.total} "
        f"({100 * row.solved / row.total:.1f}%) at {row.compute_per_problem:.3g} FLOPs per problem on "
        f"{m.suite}, the most of the configurations measured in {m.source} (run of {m.created_at}, "
        f"budget {'none' if m.budget_compute is None else f'{m.budget_compute:g}'}, max {m.max_tokens} tokens "
        "per call)"
    )
