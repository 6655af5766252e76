"""Statistics checked against values computed by hand or from exact distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memdoor.bench.stats import (
    bootstrap_ci,
    holm,
    mcnemar_exact,
    paired_bootstrap_ci,
    pareto_front,
    percentile,
    spread,
    wilson_ci,
)


def _binomial_quantile(n: int, p: float, q: float) -> float:
    """Smallest k with P(Binomial(n, p) <= k) >= q, as a rate k / n."""
    acc = 0.0
    for k in range(n + 1):
        acc += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if acc >= q:
            return k / n
    return 1.0


def test_bootstrap_ci_of_a_pass_vector_matches_the_binomial_quantiles():
    # Resampling n problems of which s passed gives Binomial(n, s/n) passes: the percentile interval
    # must sit at that distribution's 2.5% and 97.5% quantiles.
    values = [1.0] * 70 + [0.0] * 30
    lo, hi = bootstrap_ci(values, resamples=10_000, seed=1)
    assert lo == pytest.approx(_binomial_quantile(100, 0.7, 0.025), abs=0.011)
    assert hi == pytest.approx(_binomial_quantile(100, 0.7, 0.975), abs=0.011)
    assert (lo, hi) == pytest.approx((0.61, 0.79), abs=0.011)


def test_bootstrap_ci_is_seeded_and_degenerate_cases_are_exact():
    values = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci([1.0] * 12) == (1.0, 1.0)
    assert bootstrap_ci([0.0] * 12) == (0.0, 0.0)
    assert all(math.isnan(x) for x in bootstrap_ci([]))


def test_bootstrap_ci_of_a_continuous_mean_matches_the_normal_approximation():
    rng = np.random.default_rng(5)
    values = rng.normal(10.0, 2.0, size=400).tolist()
    lo, hi = bootstrap_ci(values, seed=0)
    se = float(np.std(values) / math.sqrt(len(values)))
    mean = float(np.mean(values))
    assert lo == pytest.approx(mean - 1.96 * se, abs=0.04)
    assert hi == pytest.approx(mean + 1.96 * se, abs=0.04)


def test_paired_bootstrap_of_identical_rows_is_zero_and_of_a_dominating_row_is_positive():
    a = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1] * 5
    assert paired_bootstrap_ci(a, a) == (0.0, 0.0)
    better = [1] * 50
    lo, hi = paired_bootstrap_ci(better, a)
    assert 0 < lo <= 0.4 <= hi
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1], [1, 0])


@pytest.mark.parametrize(
    ("wins", "losses", "expected"),
    [
        (0, 0, 1.0),
        (1, 0, 1.0),  # 2 * 1/2
        (0, 6, 2 / 64),  # 2 * C(6,0) / 2^6
        (1, 5, 2 * (1 + 6) / 64),  # 0.21875
        (5, 1, 2 * (1 + 6) / 64),
        (3, 3, 1.0),  # capped at 1
        (2, 10, 2 * (1 + 12 + 66) / 4096),  # 0.03857...
        (0, 10, 2 / 1024),
        (4, 14, 2 * sum(math.comb(18, k) for k in range(5)) / 2**18),  # 0.0309
    ],
)
def test_mcnemar_exact_matches_hand_computed_binomial_tails(wins, losses, expected):
    assert mcnemar_exact(wins, losses) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_exact_is_exact_for_large_counts():
    # 2 * P(X <= 400) for X ~ Binomial(1000, 1/2): far in the tail, no float underflow on the way.
    p = mcnemar_exact(400, 600)
    assert 0 < p < 1e-9
    assert mcnemar_exact(500, 500) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_percentile_and_spread_match_numpy():
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0]
    for q in (0, 25, 50, 95, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))
    s = spread(values)
    assert (s.mean, s.median, s.p95) == pytest.approx(
        (float(np.mean(values)), float(np.median(values)), float(np.percentile(values, 95)))
    )
    assert math.isnan(spread([]).mean)


def test_pareto_front_keeps_only_undominated_points_cheapest_first():
    points = [
        (100.0, 0.50),  # 0: front (cheapest)
        (300.0, 0.70),  # 1: front
        (250.0, 0.60),  # 2: front
        (400.0, 0.65),  # 3: dominated by 1
        (100.0, 0.40),  # 4: dominated by 0 (same cost, lower score)
        (900.0, 0.80),  # 5: front (best)
        (300.0, 0.70),  # 6: duplicate of 1, dropped
    ]
    assert pareto_front(points) == [0, 2, 1, 5]
    assert pareto_front([]) == []
    assert pareto_front([(5.0, 0.1)]) == [0]


def test_wilson_interval_of_a_pass_rate_does_not_collapse_at_the_edges():
    assert wilson_ci(8, 20) == pytest.approx((0.2188, 0.6134), abs=1e-4)  # textbook values
    lo, hi = wilson_ci(32, 32)
    assert hi == 1.0 and lo == pytest.approx(0.8928, abs=1e-4)  # a bootstrap would say [1, 1]
    assert wilson_ci(0, 8) == pytest.approx((0.0, 0.3244), abs=1e-4)
    assert all(math.isnan(x) for x in wilson_ci(0, 0))
    with pytest.raises(ValueError):
        wilson_ci(3, 2)
    # the interval always holds the observed rate, exactly at the edges (0/94 once gave a lower bound of
    # 1e-18 above 0, and the chart refused the negative error bar)
    for n in range(1, 400):
        for k in {0, n // 3, n}:
            lo, hi = wilson_ci(k, n)
            assert lo <= k / n <= hi
        assert wilson_ci(0, n)[0] == 0.0 and wilson_ci(n, n)[1] == 1.0


def test_holm_multiplies_the_smallest_p_by_m_and_never_lets_a_larger_p_come_out_smaller():
    # sorted: 0.005×4 = 0.02, 0.01×3 = 0.03, 0.03×2 = 0.06, 0.04×1 = 0.04 → raised to 0.06 (monotone)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm([0.031]) == [0.031] and holm([]) == []
