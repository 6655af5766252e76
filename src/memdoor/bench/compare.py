"""Comparing rows on the problems both have results for: a pair's wins, losses and paired statistics, each
team against each baseline (Holm-corrected per baseline), and the plain answer per baseline.

A difference's interval is a paired bootstrap seeded with :data:`REPORT_SEED`, so the same results always
give the same report; its p-value is McNemar's exact test on the problems one row solved and the other not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from memdoor.bench.config import RowSpec
from memdoor.bench.records import ResultRecord
from memdoor.bench.rowstats import ALPHA, PairStats, RowStats, TeamVsSingle
from memdoor.bench.stats import RESAMPLES, holm, mcnemar_exact, paired_bootstrap_ci

REPORT_SEED = 0
"""Seed of every bootstrap in a report."""


def pair_stats(
    a: str, b: str, by_row: dict[str, dict[str, ResultRecord]], *, resamples: int = RESAMPLES
) -> PairStats:
    """Row ``a`` against row ``b`` on the problems both have a result for (``by_row``: row → problem →
    result)."""
    ra, rb = by_row[a], by_row[b]
    common = [pid for pid in ra if pid in rb]
    xa = [float(ra[p].passed) for p in common]
    xb = [float(rb[p].passed) for p in common]
    wins = sum(x > y for x, y in zip(xa, xb, strict=True))
    losses = sum(x < y for x, y in zip(xa, xb, strict=True))
    both = sum(x and y for x, y in zip(xa, xb, strict=True))
    n = len(common)
    return PairStats(
        a=a,
        b=b,
        problems=n,
        a_solved=int(sum(xa)),
        b_solved=int(sum(xb)),
        wins=wins,
        losses=losses,
        both=int(both),
        neither=n - wins - losses - int(both),
        diff=(sum(xa) - sum(xb)) / n if n else None,
        diff_ci95=paired_bootstrap_ci(xa, xb, resamples=resamples, seed=REPORT_SEED) if n else (None, None),
        p_value=mcnemar_exact(wins, losses),
    )


def team_vs_baselines(
    rows: Sequence[RowSpec], stats: Sequence[RowStats], pair: Callable[[str, str], PairStats]
) -> list[TeamVsSingle]:
    """Every team row against every baseline row (``pair(team, baseline)`` compares two rows), each
    baseline's family of p-values Holm-corrected."""
    stat_of = {s.name: s for s in stats}
    vs = []
    for base in (r for r in rows if r.baseline):
        for team in (r for r in rows if not r.baseline):
            vs.append(TeamVsSingle.of(pair(team.name, base.name), stat_of[team.name], stat_of[base.name]))
    for base in (r for r in rows if r.baseline):
        family = [t for t in vs if t.baseline == base.name]
        for t, p in zip(family, holm([t.pair.p_value for t in family]), strict=True):
            t.holm_p = p
    return vs


class Conclusion(BaseModel):
    """The plain answer for one baseline: which teams beat it, the cheapest of them, and which match it
    for less (cost: compute, or tokens where a model's size is unknown)."""

    baseline: str
    comparisons: int = Field(description="Teams compared with the baseline (the family Holm corrects for).")
    better: list[str] = Field(description="Teams better with Holm-adjusted p < 0.05, cheapest first.")
    better_uncorrected: list[str] = Field(
        description="Teams better with p < 0.05 before the correction, cheapest first."
    )
    cheapest_better: str | None = Field(
        description="The cheapest team of ``better`` (None: no team is, after the correction)."
    )
    as_good_for_less: list[str] = Field(
        description="Teams solving at least as many problems as the baseline at less cost, cheapest first."
    )


def verdicts(vs: Sequence[TeamVsSingle]) -> list[Conclusion]:
    """One :class:`Conclusion` per baseline of ``vs``."""
    out = []
    for base in dict.fromkeys(t.baseline for t in vs):
        family = sorted(
            (t for t in vs if t.baseline == base), key=lambda t: (t.ratio() is None, t.ratio() or 0)
        )
        ahead = [t for t in family if t.pair.wins > t.pair.losses]
        better = [t.team for t in ahead if t.holm_p < ALPHA]
        out.append(
            Conclusion(
                baseline=base,
                comparisons=len(family),
                better=better,
                better_uncorrected=[t.team for t in ahead if t.pair.p_value < ALPHA],
                cheapest_better=better[0] if better else None,
                as_good_for_less=[
                    t.team
                    for t in family
                    if t.pair.a_solved >= t.pair.b_solved and t.ratio() is not None and (t.ratio() or 0) < 1
                ],
            )
        )
    return out
