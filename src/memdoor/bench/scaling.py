"""Scaling curves from one run: what a ``parallel:N`` team would score with k ≤ N of its agents.

Each parallel result keeps its drafts (:class:`Draft`): what the team could see of each (empty or
not, public tests passed, its behaviour group on the public tests, its mean log-probability) and, for
the report only, whether it passes the hidden tests (graded after the team answered; never seen by
any agent or selector). For every k in 1, 2, 4, … N (and N), a selector is replayed on subsets of k
drafts: all ``C(N, k)`` subsets when there are at most :data:`EXACT_SUBSETS`, else that many drawn
with a fixed seed — the mean over subsets is an unbiased estimate of the score of a k-agent team
(as pass@k's estimator is for coverage). ``oracle`` is the exact chance that some draft of the subset
is correct: ``1 − C(N − c, k) / C(N, k)`` with c correct drafts.

Selectors replayed:

- ``vote``: the vote selector's rules (:mod:`memdoor.select.vote`, default settings) on the stored
  outcomes: drafts passing the public tests survive (none: those passing the most), grouped by
  behaviour; a group of at least ⌈k/2⌉ wins, else the heaviest (weight exp(mean log-prob), summed);
  ties: larger group, more weight, lowest index; in the group the most confident draft, lowest index.
- ``logprob``: the draft with the highest mean log-probability (log-probs only).
- ``public``: the first draft passing the most public tests (public tests only).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from itertools import combinations

from pydantic import BaseModel, Field

from memdoor.select.vote import choose_group, confidence_weights

EXACT_SUBSETS = 500
"""At most this many subsets per (problem, k): all of them when C(N, k) is no larger, else a sample."""
SUBSET_SEED = 0
"""Seed of the subset samples (the same results always give the same curve)."""
SELECTORS = ("vote", "logprob", "public")


class Draft(BaseModel):
    """One draft of a parallel team, as the scaling curve needs it."""

    agent: str = Field(description="Agent id.")
    empty: bool = Field(default=False, description="No code was found in the answer.")
    public_passed: bool | None = Field(
        default=None, description="Passed every public test (None: the problem has no public tests)."
    )
    tests_passed: int = Field(default=0, description="Public tests passed.")
    group: int = Field(
        default=0, description="Behaviour group on the public tests (equal outputs, equal group)."
    )
    logprob: float | None = Field(default=None, description="Mean token log-probability.")
    correct: bool = Field(default=False, description="Passes the hidden tests (graded for the report only).")


def vote_choice(drafts: Sequence[Draft]) -> int | None:
    """Index of the draft the vote selector would choose among ``drafts`` (None: nothing to choose)."""
    live = [i for i, d in enumerate(drafts) if not d.empty]
    if not live:
        return None
    pool = live
    if any(drafts[i].public_passed is not None for i in live):
        pool = [i for i in live if drafts[i].public_passed]
        if not pool:
            most = max(drafts[i].tests_passed for i in live)
            pool = [i for i in live if drafts[i].tests_passed == most]
    groups: dict[int, list[int]] = {}
    for i in pool:
        groups.setdefault(drafts[i].group, []).append(i)
    members = list(groups.values())
    weights = confidence_weights([d.logprob for d in drafts])
    weight = [sum(weights[i] for i in g) for g in members]
    _, chosen = choose_group(members, weight, max(1, math.ceil(len(drafts) / 2)))
    return min(members[chosen], key=lambda i: (-weights[i], i))


def logprob_choice(drafts: Sequence[Draft]) -> int | None:
    live = [i for i, d in enumerate(drafts) if not d.empty]
    if not live:
        return None
    return min(live, key=lambda i: (-(drafts[i].logprob if drafts[i].logprob is not None else -math.inf), i))


def public_choice(drafts: Sequence[Draft]) -> int | None:
    live = [i for i, d in enumerate(drafts) if not d.empty]
    if not live:
        return None
    return min(live, key=lambda i: (-drafts[i].tests_passed, i))


CHOOSERS: dict[str, Callable[[Sequence[Draft]], int | None]] = {
    "vote": vote_choice,
    "logprob": logprob_choice,
    "public": public_choice,
}


def ks(n: int) -> list[int]:
    """1, 2, 4, … up to n, and n itself."""
    out, k = [], 1
    while k < n:
        out.append(k)
        k *= 2
    return [*out, n] if n >= 1 else []


def subsets(n: int, k: int, seed: int) -> list[tuple[int, ...]]:
    """Every k-subset of range(n) when there are at most EXACT_SUBSETS, else a seeded sample of them."""
    if math.comb(n, k) <= EXACT_SUBSETS:
        return list(combinations(range(n), k))
    rng = random.Random(seed)
    return [tuple(sorted(rng.sample(range(n), k))) for _ in range(EXACT_SUBSETS)]


def oracle_at(n: int, correct: int, k: int) -> float:
    """Chance that a random k-subset of n drafts, ``correct`` of them correct, holds a correct one."""
    return 1.0 - math.comb(n - correct, k) / math.comb(n, k)


def problem_curve(drafts: Sequence[Draft], n: int, seed: int = SUBSET_SEED) -> dict[int, dict[str, float]]:
    """k → {selector: expected correctness, "oracle": coverage} for one problem's drafts, padded with
    empty drafts up to the team size ``n`` (an agent that failed gave none)."""
    padded = list(drafts[:n]) + [Draft(agent="", empty=True)] * max(0, n - len(drafts))
    correct = sum(d.correct and not d.empty for d in padded)
    out: dict[int, dict[str, float]] = {}
    for k in ks(n):
        picks = subsets(n, k, seed * 1_000 + k)
        row = {}
        for name, choose in CHOOSERS.items():
            hits = 0
            for subset in picks:
                chosen = choose([padded[i] for i in subset])
                hits += chosen is not None and padded[subset[chosen]].correct
            row[name] = hits / len(picks)
        row["oracle"] = oracle_at(n, correct, k)
        out[k] = row
    return out


def scaling_curve(per_problem: Sequence[Sequence[Draft]], n: int) -> dict[str, dict[str, float]]:
    """The mean of :func:`problem_curve` over problems: ``{"k": {"vote", "logprob", "public", "oracle"}}``
    (problems with no stored drafts count as failed at every k)."""
    if not per_problem or n < 1:
        return {}
    total: dict[int, dict[str, float]] = {k: dict.fromkeys((*SELECTORS, "oracle"), 0.0) for k in ks(n)}
    for drafts in per_problem:
        for k, row in problem_curve(drafts, n).items():
            for name, value in row.items():
                total[k][name] += value
    return {str(k): {name: v / len(per_problem) for name, v in row.items()} for k, row in total.items()}
