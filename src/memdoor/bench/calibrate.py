"""Fitting the estimate of an answer being correct (:mod:`memdoor.select.calibration`) on a bench run's results.

Only problems graded on hidden tests take part (the caller leaves the others out): where the public tests
are all the grading there is, "passed" is one of the features and the fit would learn nothing true.

Every finished result with signals is one sample: the team's signals and strategy, and whether the
answer passed the hidden tests. Quality is measured out of fold: the problems are split into ``folds``
groups (a fixed shuffle), each group is predicted by a model fitted on the others — all rows of a
problem fall in one group, so no problem is predicted by a model that saw it — and the Brier score, the
expected calibration error and a reliability table are computed on those predictions. The model
returned is then fitted on every sample.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from memdoor.bench.config import RowSpec
from memdoor.bench.records import ResultRecord
from memdoor.core.solution import Signals
from memdoor.select.calibration import FEATURES, Calibration, Fit, features, logistic_fit

MIN_SAMPLES = 40
"""Fewer samples than this (or only one outcome) fit nothing."""


def samples(results: Sequence[ResultRecord], rows: Sequence[RowSpec]) -> list[tuple[str, list[float], int]]:
    """(problem id, features, passed) of every finished result that recorded its signals."""
    strategy = {r.name: r.strategy for r in rows}
    out = []
    for r in results:
        if r.status != "done" or not r.signals or r.row not in strategy:
            continue
        sig = Signals.model_validate_json(r.signals)
        out.append((r.problem_id, features(sig, strategy[r.row]), int(r.passed)))
    return out


def reliability(predicted: Sequence[float], observed: Sequence[int], bins: int = 10) -> Fit:
    n = len(predicted)
    brier = sum((p - y) ** 2 for p, y in zip(predicted, observed, strict=True)) / n
    rate = sum(observed) / n
    table = []
    ece = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, p in enumerate(predicted) if lo <= p < hi or (b == bins - 1 and p == 1.0)]
        if not idx:
            continue
        mean_p = sum(predicted[i] for i in idx) / len(idx)
        mean_y = sum(observed[i] for i in idx) / len(idx)
        ece += len(idx) / n * abs(mean_p - mean_y)
        table.append((round(mean_p, 4), round(mean_y, 4), len(idx)))
    return Fit(results=n, brier=brier, brier_base=rate * (1 - rate), ece=ece, bins=table)


def fit(
    results: Sequence[ResultRecord], rows: Sequence[RowSpec], *, fitted_on: str, folds: int = 5, seed: int = 0
) -> Calibration | None:
    """The calibration fitted on ``results``, with its out-of-fold quality; None when too few samples."""
    data = samples(results, rows)
    ys = [y for _, _, y in data]
    if len(data) < MIN_SAMPLES or len(set(ys)) < 2:
        return None
    problems = sorted({pid for pid, _, _ in data})
    random.Random(seed).shuffle(problems)
    fold_of = {pid: i % folds for i, pid in enumerate(problems)}
    predicted: list[float] = [0.0] * len(data)
    for k in range(folds):
        train = [(x, y) for pid, x, y in data if fold_of[pid] != k]
        test = [i for i, (pid, _, _) in enumerate(data) if fold_of[pid] == k]
        if not test:
            continue
        if len({y for _, y in train}) < 2:  # a fold with one outcome left: predict its rate
            rate = sum(y for _, y in train) / max(1, len(train))
            for i in test:
                predicted[i] = rate
            continue
        w, b = logistic_fit([x for x, _ in train], [y for _, y in train])
        model = Calibration(features=list(FEATURES), weights=w, bias=b, fitted_on="")
        for i in test:
            predicted[i] = model.probability(data[i][1])
    w, b = logistic_fit([x for _, x, _ in data], ys)
    return Calibration(
        features=list(FEATURES),
        weights=w,
        bias=b,
        fitted_on=f"{fitted_on}: {len(data)} results of {len(problems)} problems",
        out_of_fold=reliability(predicted, ys),
    )
