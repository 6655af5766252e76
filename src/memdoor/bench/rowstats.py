"""One row's numbers and one comparison of two rows: the records a report is made of (the analysis fills
them in, the compute-matched verdict and the serving model read them)."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field

from memdoor.bench.stats import Spread

ALPHA = 0.05
"""Significance level of the report's verdicts and plain-language sentences."""


class RowStats(BaseModel):
    """One row's results over the problems it has results for."""

    name: str = Field(description="Row name, as in LIST (``parallel:5``) or ``STRATEGY@MODEL``.")
    strategy: str = Field(description="Strategy spec.")
    models: list[str] = Field(description="Model specs of the team.")
    baseline: bool = Field(description="A --baseline row.")
    solved: int = Field(description="Problems whose chosen code passed every test.")
    total: int = Field(description="Problems with a stored result (errors included).")
    errors: int = Field(description="Problems whose run raised (counted as failed).")
    pass_at_1: float | None = Field(description="solved / total (None when no result).")
    ci95: tuple[float | None, float | None] = Field(
        description="95% Wilson score interval of pass@1 (does not collapse at 0 or all solved)."
    )
    oracle_solved: int | None = Field(
        description="Problems where some candidate passed (None: not recorded)."
    )
    oracle_rate: float | None = Field(description="oracle_solved / total: the selection ceiling.")
    tokens: Spread = Field(description="Prompt + completion tokens per problem.")
    calls: Spread = Field(description="Model calls per problem.")
    seconds: Spread = Field(description="Wall seconds per problem (the run as the runner timed it).")
    usd: Spread | None = Field(description="Dollars per problem; None when some call was unpriced.")
    team: str = Field(default="", description="The row's team in words (models and how many agents each).")
    compute: Spread | None = Field(
        default=None,
        description="FLOPs per problem (≈ 2 × parameters × tokens); None when a size is unknown.",
    )
    engine_seconds: Spread | None = Field(
        default=None, description="Measured engine seconds per problem (sum of call latencies)."
    )
    scaling: dict[str, dict[str, float]] | None = Field(
        default=None,
        description="parallel rows: k → expected pass@1 of the vote, logprob-only and public-tests-only "
        "selectors and the oracle with k of the N agents (see memdoor.bench.scaling).",
    )
    budget_stops: int = Field(description="Problems where the strategy stopped because the budget ran out.")

    @property
    def tokens_per_problem(self) -> float:
        return self.tokens.mean

    @property
    def seconds_per_problem(self) -> float:
        return self.seconds.mean

    @property
    def usd_per_problem(self) -> float | None:
        return None if self.usd is None else self.usd.mean

    @property
    def compute_per_problem(self) -> float | None:
        return None if self.compute is None else self.compute.mean

    def cost(self, axis: str) -> float | None:
        """Mean cost per problem on ``axis`` (one of :data:`AXES`); None when unknown."""
        value = {
            "compute": self.compute_per_problem,
            "tokens": self.tokens.mean,
            "seconds": self.seconds.mean,
            "usd": self.usd_per_problem,
        }[axis]
        return None if value is None or math.isnan(value) else value


class PairStats(BaseModel):
    """Row ``a`` against row ``b`` on the problems both have results for."""

    a: str
    b: str
    problems: int = Field(description="Problems both rows have results for.")
    a_solved: int
    b_solved: int
    wins: int = Field(description="Problems a solved and b did not.")
    losses: int = Field(description="Problems b solved and a did not.")
    both: int = Field(description="Problems both solved.")
    neither: int = Field(description="Problems neither solved.")
    diff: float | None = Field(description="pass@1(a) - pass@1(b) on these problems.")
    diff_ci95: tuple[float | None, float | None] = Field(description="Paired bootstrap 95% interval of diff.")
    p_value: float = Field(description="Exact two-sided McNemar p-value (binomial on wins vs losses).")


class TeamVsSingle(BaseModel):
    """A row against a --baseline row (typically a team of small models against one bigger model)."""

    team: str
    baseline: str
    pair: PairStats
    token_ratio: float | None = Field(description="Team tokens per problem / baseline tokens per problem.")
    compute_ratio: float | None = Field(
        default=None, description="Team compute per problem / baseline compute per problem."
    )
    seconds_ratio: float | None = Field(
        description="Team seconds per problem / baseline seconds per problem."
    )
    holm_p: float = Field(
        default=1.0,
        description="The McNemar p-value adjusted (Holm) for every team compared with this baseline: "
        "below 0.05, the team is better even counting the chance that one of many comparisons looks so.",
    )

    def ratio(self) -> float | None:
        """Compute ratio where known, else the token ratio: what "cheaper" means in a verdict."""
        return self.compute_ratio if self.compute_ratio is not None else self.token_ratio

    @classmethod
    def of(cls, pair: PairStats, team: RowStats, baseline: RowStats) -> TeamVsSingle:
        """``team`` against ``baseline`` with their paired results ``pair`` and their cost ratios."""
        return cls(
            team=team.name,
            baseline=baseline.name,
            pair=pair,
            token_ratio=cost_ratio(team.tokens.mean, baseline.tokens.mean),
            compute_ratio=cost_ratio(team.compute_per_problem, baseline.compute_per_problem),
            seconds_ratio=cost_ratio(team.seconds.mean, baseline.seconds.mean),
        )


def cost_ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is unknown (None or NaN) or b is 0."""
    if a is None or b is None or math.isnan(a) or math.isnan(b) or b == 0:
        return None
    return a / b
