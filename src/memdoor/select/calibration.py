"""An estimated probability that a team's answer is correct, from what the team saw before grading.

Agreement alone is not confidence: three small agents that share a mistake agree 3 of 3. The estimate
here is a logistic model over a team's :class:`~memdoor.core.solution.Signals` — the share of candidates
that behaved like the answer, whether and how far it passed the public tests, its mean token
log-probability, how the selector chose, the team size and the strategy family — fitted on stored
bench results (``memdoor report DIR --calibration-out FILE``: fitted on every problem of the run, and
checked on problems it was not fitted on by cross-validation; see :mod:`memdoor.bench.calibrate`).

A :class:`Calibration` says what it was fitted on (suites, rows, results) and how well it did out of
fold (Brier score, expected calibration error). The package ships one (``memdoor/data/calibration.json``)
when a committed run was fitted; answers then carry ``p_correct`` with that provenance. An estimate
fitted on one suite is only as good on another as that suite resembles it: the provenance says which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from importlib import resources

from pydantic import BaseModel, Field, ValidationError, model_validator

from memdoor.core.solution import Signals

FAMILIES = ("single", "parallel", "sequential", "shared", "hybrid", "cascade", "adaptive")
"""Strategy families with a feature of their own (``sstar`` counts as hybrid; others as none of them)."""
DEFAULT_FILE = "calibration.json"


def family(strategy: str) -> str | None:
    name = strategy.split("@", 1)[0].split(":", 1)[0]
    name = {"sstar": "hybrid"}.get(name, name)
    return name if name in FAMILIES else None


FEATURES = (
    "agree_share",
    "public_all_passed",
    "public_share",
    "mean_logprob",
    "no_logprob",
    "log_pool",
    "majority",
    *(f"strategy_{f}" for f in FAMILIES),
)


def features(signals: Signals, strategy: str) -> list[float]:
    """The model's inputs, in :data:`FEATURES` order."""
    s = signals
    lp = s.mean_logprob
    fam = family(strategy)
    return [
        s.agree / max(1, s.pool),
        float(s.public_total > 0 and s.public_passed == s.public_total),
        s.public_passed / s.public_total if s.public_total else 0.0,
        0.0 if lp is None else max(-3.0, min(0.0, lp)),
        float(lp is None),
        math.log(max(1, s.pool)),
        float(s.rule in ("majority", "only-one")),
        *(float(fam == f) for f in FAMILIES),
    ]


class Fit(BaseModel):
    """How well the estimate did on problems it was not fitted on (cross-validation by problem)."""

    results: int = Field(description="Results predicted out of fold.")
    brier: float = Field(description="Mean squared error of the probability (lower is better).")
    brier_base: float = Field(description="Brier score of predicting the overall pass rate for everything.")
    ece: float = Field(description="Expected calibration error over 10 equal-width bins.")
    bins: list[tuple[float, float, int]] = Field(
        default_factory=list, description="(mean estimate, observed pass rate, results) per non-empty bin."
    )


class Calibration(BaseModel):
    """A fitted logistic estimate of P(answer correct | signals, strategy)."""

    features: list[str] = Field(description="Feature names, in the order of ``weights``.")
    weights: list[float] = Field(description="One weight per feature.")
    bias: float = Field(description="Intercept.")
    fitted_on: str = Field(description="What it was fitted on, in words (suites, rows, results).")
    out_of_fold: Fit | None = Field(default=None, description="Cross-validated quality on held-out problems.")

    @model_validator(mode="after")
    def _one_weight_per_feature(self) -> Calibration:
        if len(self.weights) != len(self.features) or not all(math.isfinite(w) for w in self.weights):
            raise ValueError(
                f"{len(self.weights)} weights for {len(self.features)} features, or one not finite"
            )
        if not math.isfinite(self.bias):
            raise ValueError("the bias is not finite")
        return self

    def predict(self, signals: Signals, strategy: str) -> float:
        """P(correct) for an answer with these signals (0..1)."""
        return self.probability(features(signals, strategy))

    def probability(self, x: Sequence[float]) -> float:
        """P(correct) for a feature vector (in :data:`FEATURES` order)."""
        z = self.bias + sum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def logistic_fit(
    xs: Sequence[Sequence[float]], ys: Sequence[int], *, l2: float = 1.0, steps: int = 50
) -> tuple[list[float], float]:
    """Weights and bias of an L2-regularised logistic regression (Newton's method; the bias unpenalised)."""
    import numpy as np

    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -40, 40)))
        grad = a.T @ (p - y) + reg * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return [float(v) for v in w[:-1]], float(w[-1])


def load_default() -> Calibration | None:
    """The calibration shipped with the package, or None when there is none (or it cannot be read)."""
    try:
        text = (resources.files("memdoor") / "data" / DEFAULT_FILE).read_text(encoding="utf-8")
        cal = Calibration.model_validate_json(text)
    except (OSError, ValidationError, ValueError):
        return None
    return cal if cal.features == list(FEATURES) else None
