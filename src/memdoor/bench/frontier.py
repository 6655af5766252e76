"""The compute-matched verdict: each row against the best single-model row at no more than its cost.

A report's baseline row is one configuration of the bigger model, usually one draw. A team spending two or
three times its compute is then compared with a model that was not allowed to spend as much. Here the
bigger model may spend it too, in any configuration the run holds:

- A **single-model row** is a row whose agents all use one model and one language, whatever the strategy
  and however many draws (``single@M``, ``parallel:3@M``, ``hybrid:3[...]@M``, ``adaptive:5@M``, or an
  entry without ``@`` run by one ``--model``).
- The **single-model frontier** is the Pareto front of those rows (cost per problem against pass@1): for
  any cost, the best a single model did at no more than it.
- The **rows compared** are every row except the single-model rows of the run's biggest model (the model
  a user would otherwise give the compute to, by parameters): the teams, and a smaller model's own rows.
  When some model's size is unknown, there is no biggest model and every row but a single-model one is
  compared.
- A compared row's **match** is the single-model row with the highest pass@1 among those whose cost per
  problem is at most the row's; ties go to the cheaper, then to the earlier row. A smaller model's own
  single-model row is matched only with rows of other models (against its own model it would be a
  comparison of strategies, not of models).
  A row with no single-model row at or below its cost has no match (and no test).
- The test is the report's own: exact McNemar on the paired problems, Holm-corrected over the compared
  rows that have a match.

Cost is compute per problem (FLOPs) when every row's is known, else tokens per problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from memdoor.bench.rowstats import ALPHA, PairStats, RowStats, TeamVsSingle
from memdoor.bench.stats import holm, pareto_front


class ComputeMatched(BaseModel):
    """Every compared row against the best single-model row at no more than its cost."""

    cost_axis: str = Field(description="compute (FLOPs per problem) or tokens (a model's size is unknown).")
    biggest_model: str | None = Field(
        description="The run's biggest model by parameters, whose single-model rows are the reference "
        "(None: some model's size is unknown)."
    )
    single_model_rows: list[str] = Field(description="Rows whose agents all use one model and language.")
    frontier: list[str] = Field(
        description="The single-model rows on the cost–pass@1 Pareto front, cheapest first."
    )
    comparisons: list[TeamVsSingle] = Field(
        description="Each compared row (``team``) against its match (``baseline``); ``holm_p`` is corrected "
        "over these comparisons."
    )
    unmatched: list[str] = Field(
        description="Compared rows with no single-model row at or below their cost (nothing to test)."
    )
    better: list[str] = Field(
        description="Rows better than their match with Holm-adjusted p < 0.05 (more wins than losses)."
    )
    worse: list[str] = Field(
        description="Rows whose match is better with Holm-adjusted p < 0.05: the single model wins at no "
        "more cost."
    )


def is_single_model(models: Sequence[str], languages: Sequence[str] = ()) -> bool:
    """True for a team of one model (and at most one language), whatever the number of agents."""
    return len(set(models)) == 1 and len(set(languages)) <= 1


def biggest_model(models: Sequence[str], size: Callable[[str], float | None]) -> str | None:
    """The model with the most parameters (the first on a tie); None when some size is unknown."""
    sizes = {m: size(m) for m in dict.fromkeys(models)}
    if not sizes or any(s is None for s in sizes.values()):
        return None
    return max(sizes, key=lambda m: sizes[m] or 0.0)


def cost_axis(rows: Sequence[RowStats]) -> str:
    """compute when every row with results has a known compute, else tokens."""
    scored = [r for r in rows if r.pass_at_1 is not None]
    return "compute" if all(r.cost("compute") is not None for r in scored) else "tokens"


def single_model_frontier(rows: Sequence[RowStats], singles: Sequence[str], axis: str) -> list[str]:
    """The single-model rows on the Pareto front of cost on ``axis`` against pass@1, cheapest first."""
    pts = [r for r in rows if r.name in set(singles) and r.pass_at_1 is not None and r.cost(axis) is not None]
    front = pareto_front([(r.cost(axis) or 0.0, r.pass_at_1 or 0.0) for r in pts])
    return [pts[i].name for i in front]


def best_at_most(row: RowStats, candidates: Sequence[RowStats], axis: str) -> RowStats | None:
    """The candidate (not ``row``) with the highest pass@1 at a cost no higher than ``row``'s; ties to the
    cheaper, then to the earlier; None when no candidate costs that little."""
    limit = row.cost(axis)
    if limit is None:
        return None
    fits = [
        (i, c)
        for i, c in enumerate(candidates)
        if c.name != row.name and c.pass_at_1 is not None and (c.cost(axis) or 0.0) <= limit
    ]
    if not fits:
        return None
    return min(fits, key=lambda ic: (-(ic[1].pass_at_1 or 0.0), ic[1].cost(axis) or 0.0, ic[0]))[1]


def compute_matched(
    rows: Sequence[RowStats],
    languages: dict[str, list[str]],
    pair: Callable[[str, str], PairStats],
    size: Callable[[str], float | None],
) -> ComputeMatched | None:
    """The compute-matched verdict of ``rows`` (None when the run has no single-model row):
    ``languages`` maps a row to its agents' languages, ``pair(a, b)`` gives the paired results of two rows
    and ``size(model)`` a model's parameters (None: unknown)."""
    singles = [r.name for r in rows if is_single_model(r.models, languages.get(r.name, ()))]
    if not singles:
        return None
    axis = cost_axis(rows)
    big = biggest_model([m for r in rows for m in r.models], size)
    reference = {r.name for r in rows if r.name in singles and r.models[0] == big}
    candidates = [r for r in rows if r.name in set(singles) and r.cost(axis) is not None]
    comparisons, unmatched = [], []
    for r in rows:
        if r.name in reference or r.pass_at_1 is None or (big is None and r.name in singles):
            continue
        own = r.models[0] if r.name in singles else None  # a single model is matched with other models
        match = best_at_most(r, [c for c in candidates if c.models[0] != own], axis)
        if match is None:
            unmatched.append(r.name)
            continue
        comparisons.append(TeamVsSingle.of(pair(r.name, match.name), r, match))
    for t, p in zip(comparisons, holm([t.pair.p_value for t in comparisons]), strict=True):
        t.holm_p = p
    return ComputeMatched(
        cost_axis=axis,
        biggest_model=big,
        single_model_rows=singles,
        frontier=single_model_frontier(rows, singles, axis),
        comparisons=comparisons,
        unmatched=unmatched,
        better=[t.team for t in comparisons if t.pair.wins > t.pair.losses and t.holm_p < ALPHA],
        worse=[t.team for t in comparisons if t.pair.losses > t.pair.wins and t.holm_p < ALPHA],
    )
