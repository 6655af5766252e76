"""The vote selector: filter by public tests, group by behaviour, then the k-of-N rule or confidence.

It decides only: candidates run through the :class:`~memdoor.core.protocols.CodeRunner` it is given, and
the strategy records the decision (see :meth:`memdoor.strategies.base.TeamRun.select`).

1. Every distinct candidate code runs on the public tests (a verdict the candidate already carries
   is reused); failures and empty code drop out.
2. Survivors are grouped by behaviour: their normalised outputs on the public tests and on the
   agent-written ``extra_inputs`` (see :mod:`memdoor.select.behaviour`). Identical code is one
   behaviour and runs once.
3. A group with at least ``k`` members (default ⌈N/2⌉ of the N candidates: the seed's "3 of 5")
   wins; otherwise the group with the most confidence weight wins.
4. Ties break deterministically: larger group, then more weight, then the lowest candidate index.
5. Within the winning group a fresh draft is preferred to a rewrite (a repair, revision or refinement
   written from code in its prompt, whose copied tokens raise its log-probabilities: in ``shared`` the
   refinements copied a wrong teammate and outranked the right drafts they behaved like); among those
   the member with the highest mean token log-probability is chosen (ties: lowest index).
6. With no survivor the team still answers: the candidates that passed the most public tests form
   the pool and the same rules choose among them (reason ``no-survivor``).

Confidence weight: a candidate weighs ``exp(mean_logprob)``, the geometric-mean probability of its
tokens, in (0, 1]. A candidate without log-probabilities weighs the mean of the known weights (1.0
when none is known, which makes the vote a plain count). A group weighs the *sum* of its members'
weights by default (``weighting="mean"`` or ``"max"`` to change it), so both agreement and
confidence count. ``Selection.confidence`` is the chosen group's share of the pool's total weight.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdoor.core.candidates import Candidate, Duel, DuelWhen, Selection
from memdoor.core.errors import UsageError, validation_problems
from memdoor.problems.languages import answer_in
from memdoor.select.behaviour import behaviour_key, group_by_key, result_key

if TYPE_CHECKING:
    from memdoor.core.problem import Problem, TestCase
    from memdoor.core.protocols import CodeRunner, Referee
    from memdoor.core.verdict import TestResult, Verdict

Weighting = Literal["sum", "mean", "max"]


class VoteConfig(BaseModel):
    """Settings of :class:`VoteSelector`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int | None = Field(
        default=None, ge=1, description="Members a group needs to win outright; None: ⌈N/2⌉ of N candidates."
    )
    weighting: Weighting = Field(
        default="sum",
        description="How members' confidence weights (exp of mean log-prob) make a group's weight: "
        "sum (agreement and confidence), mean (confidence only) or max (the most confident member).",
    )


def _rounded(x: float) -> float:
    """Weights compared for ties ignore float rounding noise from summing in another order."""
    return float(f"{x:.9g}")


def confidence_weights(mean_logprobs: Sequence[float | None]) -> list[float]:
    """Each candidate's weight, exp(mean token log-probability); a candidate without log-probabilities
    gets the mean of the others' (1.0 when none has any)."""
    known = [math.exp(min(lp, 0.0)) for lp in mean_logprobs if lp is not None]
    default = sum(known) / len(known) if known else 1.0
    return [math.exp(min(lp, 0.0)) if lp is not None else default for lp in mean_logprobs]


def choose_group(groups: list[list[int]], weight: list[float], k: int) -> tuple[str, int]:
    """(rule, index of the winning group): k-of-N majority, the only group, or the heaviest; ties break on
    size or weight, then the lowest first member."""
    majority = [gi for gi, g in enumerate(groups) if len(g) >= k]
    if majority:
        return "majority", min(
            majority, key=lambda gi: (-len(groups[gi]), -_rounded(weight[gi]), groups[gi][0])
        )
    if len(groups) == 1:
        return "only-one", 0
    return "confidence", min(
        range(len(groups)), key=lambda gi: (-_rounded(weight[gi]), -len(groups[gi]), groups[gi][0])
    )


class VoteSelector:
    """Chooses among candidates by execution on public tests, behaviour groups, votes and confidence."""

    name = "vote"

    def __init__(self, k: int | None = None, *, weighting: Weighting = "sum") -> None:
        try:
            self.config = VoteConfig(k=k, weighting=weighting)
        except ValidationError as e:
            problems = validation_problems(e)
            raise UsageError(f"bad vote selector settings: {problems}") from e

    async def select(
        self,
        problem: Problem,
        candidates: Sequence[Candidate],
        runner: CodeRunner,
        *,
        extra_inputs: Sequence[TestCase] = (),
        referee: Referee | None = None,
        duel: DuelWhen = "contested",
    ) -> Selection:
        """Pick a candidate using only the public tests and ``extra_inputs`` (run by ``runner``); with a
        ``referee``, a vote without a strict majority (any vote with two or more groups when ``duel`` is
        ``"split"``) goes to whichever of the two leading groups it finds right on an input where they
        differ."""
        return await self._decide(problem, list(candidates), runner, list(extra_inputs), referee, duel)

    # -- the decision ----------------------------------------------------------------------------

    async def _decide(
        self,
        problem: Problem,
        candidates: list[Candidate],
        runner: CodeRunner,
        extra: list[TestCase],
        referee: Referee | None = None,
        duel_when: DuelWhen = "contested",
    ) -> Selection:
        k = self.config.k or max(1, math.ceil(len(candidates) / 2))
        by_code: dict[str, list[int]] = {}  # identical code (up to surrounding blank space) runs once
        for i, c in enumerate(candidates):
            if c.code.strip():
                by_code.setdefault(c.code.strip(), []).append(i)
        program = {key: candidates[members[0]].code for key, members in by_code.items()}  # run as written
        if not by_code:
            return Selection(index=None, reason="none", k=k)
        # each code runs in its own language (a mixed-language team votes by behaviour on the same inputs)
        view = {key: answer_in(problem, candidates[members[0]].language) for key, members in by_code.items()}

        public = await self._public_verdicts(problem, by_code, program, view, candidates, runner)
        if problem.public_tests:
            pool = [c for c, v in public.items() if v is not None and v.passed]
        else:
            pool = list(by_code)  # nothing to filter on
        fallback = not pool
        if fallback:  # nobody passed: the team still answers, from those that passed the most
            most = max(v.tests_passed for v in public.values() if v is not None)
            pool = [c for c, v in public.items() if v is not None and v.tests_passed == most]

        extra_runs: dict[str, Verdict] = {}
        if extra and len(pool) > 1:
            runs = await asyncio.gather(*(runner.run_tests(view[c], program[c], extra) for c in pool))
            extra_runs = dict(zip(pool, runs, strict=True))
            if not problem.public_tests:  # code that cannot even load drops out here
                pool = [c for c in pool if extra_runs[c].status != "compile_error"] or pool

        tests = [*problem.public_tests, *extra]
        kinds = [t.kind for t in tests]

        def results_of(code: str) -> list[TestResult]:
            v = public[code]
            return [
                *(v.tests if v is not None else ()),
                *(extra_runs[code].tests if code in extra_runs else ()),
            ]

        def key(code: str) -> tuple:
            results = results_of(code)
            return behaviour_key(results, kinds) if len(results) == len(kinds) else (code,)

        groups = sorted(
            (sorted(i for ci in g for i in by_code[pool[ci]]) for g in group_by_key([key(c) for c in pool])),
            key=lambda g: g[0],
        )
        weights = confidence_weights([c.mean_logprob for c in candidates])
        group_weight = [self._group_weight([weights[i] for i in g]) for g in groups]
        rule, chosen = choose_group(groups, group_weight, k)
        duel = None
        voters = sum(len(g) for g in groups)
        contested = rule != "majority" or 2 * len(groups[chosen]) <= voters  # no strict majority: 1-1, 2-2-1
        if referee is not None and (contested or duel_when == "split") and len(groups) > 1 and not fallback:
            code_of = lambda gi: candidates[groups[gi][0]].code.strip()  # noqa: E731
            duel = await self._duel(problem, tests, groups, group_weight, code_of, results_of, referee)
            if duel is not None and duel.winner is not None:
                rule, chosen = "referee", duel.groups[duel.winner]
        index = min(groups[chosen], key=lambda i: (candidates[i].rewrite, -weights[i], i))
        total = sum(group_weight)
        return Selection(
            index=index,
            confidence=group_weight[chosen] / total if total > 0 else 1.0 / len(groups),
            reason="no-survivor" if fallback else rule,
            rule=rule,
            k=k,
            groups=groups,
            survivors=[] if fallback else sorted(i for g in groups for i in g),
            votes={str(gi): round(w, 6) for gi, w in enumerate(group_weight)},
            public_verdict=public[candidates[index].code.strip()],
            duel=duel,
        )

    @staticmethod
    async def _duel(problem, tests, groups, weight, code_of, results_of, referee: Referee) -> Duel | None:
        """The two heaviest groups on the first input where both ran to an output and the outputs differ
        (by the grader's comparison), judged by ``referee``; None when no input tells them apart."""
        lead = sorted(
            range(len(groups)), key=lambda gi: (-_rounded(weight[gi]), -len(groups[gi]), groups[gi][0])
        )
        a, b = lead[0], lead[1]
        ra, rb = results_of(code_of(a)), results_of(code_of(b))
        for i, (x, y) in enumerate(zip(ra, rb, strict=False)):
            if i >= len(tests) or x.output is None or y.output is None:
                continue
            kind = tests[i].kind
            if result_key(x, kind) == result_key(y, kind) or ("!", x.status) == result_key(x, kind):
                continue
            if ("!", y.status) == result_key(y, kind):
                continue
            outputs = (x.output, y.output)
            winner = await referee.which(problem, tests[i], outputs)
            return Duel(groups=(a, b), test=i, input=tests[i].input, outputs=outputs, winner=winner)
        return None

    async def _public_verdicts(
        self,
        problem: Problem,
        by_code: dict[str, list[int]],
        program: dict[str, str],
        view: dict[str, Problem],
        candidates: list[Candidate],
        runner: CodeRunner,
    ) -> dict[str, Verdict | None]:
        """Each distinct code's verdict on the public tests: reused when a candidate carries a complete
        one, else run (all concurrently). None for every code when there are no public tests."""
        if not problem.public_tests:
            return dict.fromkeys(by_code)
        out: dict[str, Verdict | None] = {}
        to_run: list[str] = []
        for code in by_code:
            known = [
                candidates[i].public
                for i in by_code[code]
                if candidates[i].public is not None
                and len(candidates[i].public.tests) == len(problem.public_tests)
            ]
            if known:
                out[code] = known[0]
            else:
                to_run.append(code)
        runs = await asyncio.gather(*(runner.run_tests(view[code], program[code]) for code in to_run))
        out.update(zip(to_run, runs, strict=True))
        return out

    def _group_weight(self, member_weights: list[float]) -> float:
        if self.config.weighting == "mean":
            return sum(member_weights) / len(member_weights)
        if self.config.weighting == "max":
            return max(member_weights)
        return sum(member_weights)
