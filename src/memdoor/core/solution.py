"""A strategy's result on one problem, and its grading on hidden tests (done outside the strategy).

:meth:`Solution.record` is the one projection of a Solution into a flat record with no test contents:
the memory's final answer, ``solve --json``, serve's ``memdoor`` field, the seed answer and the bench
store all take their fields from it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, PrivateAttr

from memdoor.core.candidates import Candidate, Selection
from memdoor.core.errors import qualified_name
from memdoor.core.ledger import Ledger, LedgerTotals
from memdoor.core.problem import TestCase
from memdoor.core.verdict import Verdict


class AgentFailure(BaseModel):
    """An agent that dropped out (its endpoint failed for good)."""

    agent: str
    error: str = Field(description="Error type and message.")


class VerdictSummary(BaseModel):
    """A verdict's outcome without test contents."""

    status: str = Field(description="passed, wrong_answer, runtime_error, time_limit, ...")
    tests_passed: int = Field(description="Tests passed.")
    tests_total: int = Field(description="Tests run or skipped.")

    @classmethod
    def of(cls, verdict: Verdict | None) -> VerdictSummary | None:
        if verdict is None:
            return None
        return cls(status=verdict.status, tests_passed=verdict.tests_passed, tests_total=verdict.tests_total)


class CandidateSummary(BaseModel):
    """One candidate without its code: who wrote it, when, and how it did on the public tests."""

    agent: str
    round: int
    public: str | None = Field(description="Status on the public tests; None when never run.")


class Signals(BaseModel):
    """What the team could see about its own answer before grading: the inputs of a calibrated estimate
    of the answer being correct (:mod:`memdoor.select.calibration`)."""

    agree: int = Field(description="Candidates in the chosen answer's behaviour group (1 without a vote).")
    pool: int = Field(description="Candidates the selector weighed (or made, without a vote).")
    public_passed: int = Field(description="Public tests the chosen code passed.")
    public_total: int = Field(description="Public tests it ran on.")
    mean_logprob: float | None = Field(description="Mean token log-probability of the chosen answer.")
    rule: str | None = Field(description="How the selector chose (majority, confidence, referee, ...).")


class SolutionRecord(BaseModel):
    """What a run produced and cost, as every face reports it (see :meth:`Solution.record`)."""

    problem_id: str
    strategy: str
    code: str
    language: str | None = Field(
        default=None,
        description="The code's language when it is not the problem's own (mixed-language teams).",
    )
    agent: str | None
    agents: list[str]
    confidence: float | None
    agreement: str | None = Field(
        default=None,
        description="How many candidates behaved like the chosen one, in words (``3 of 5 agents agree``); "
        "agreement is not correctness: agents often share a mistake.",
    )
    p_correct: float | None = Field(
        default=None, description="Estimated probability that the answer is correct (see Solution.p_correct)."
    )
    p_correct_basis: str | None = Field(default=None, description="What that estimate was fitted on.")
    selection: str | None = Field(
        description="The selector's reason (majority, confidence, ...), if one ran."
    )
    passed: bool | None
    oracle: bool | None
    verdict: VerdictSummary | None = Field(description="The chosen code on the grading tests.")
    public: VerdictSummary | None = Field(description="The chosen code on the public tests.")
    candidates: list[CandidateSummary]
    written_tests: list[str] = Field(description="Inputs of the test inputs the team wrote, if any.")
    stopped: str
    failures: list[AgentFailure]
    error: str | None
    error_type: str | None
    trace_id: str
    totals: LedgerTotals = Field(description="The ledger's totals (wall seconds: the team's time).")


class Solution(BaseModel):
    """What a team produced for one problem."""

    problem_id: str
    strategy: str = Field(description="Strategy name as configured, e.g. parallel:5.")
    code: str = Field(default="", description="The chosen code ('' when the team produced none).")
    language: str | None = Field(
        default=None,
        description="The chosen code's language when it is not the problem's own (a mixed-language team).",
    )
    agent: str | None = Field(default=None, description="Author of the chosen code.")
    agents: list[str] = Field(default_factory=list, description="Agent ids of the team (id=model spec).")
    confidence: float | None = Field(default=None, description="Selector confidence, 0..1.")
    candidates: list[Candidate] = Field(default_factory=list, description="Every candidate considered.")
    selection: Selection | None = Field(default=None, description="The selector's decision, if one ran.")
    public_verdict: Verdict | None = Field(default=None, description="Chosen code on the public tests.")
    stopped: str = Field(
        default="done", description="Why the strategy stopped: done, budget, stalled, rounds, error."
    )
    failures: list[AgentFailure] = Field(default_factory=list, description="Agents that failed mid-task.")
    written_tests: list[TestCase] = Field(
        default_factory=list,
        description="Test inputs (no outputs) the team wrote for a problem that came with no tests; they "
        "were its public tests (see SolveConfig.test_inputs).",
    )
    tests_note: str | None = Field(
        default=None, description="Why the team wrote no test inputs when it was asked to."
    )
    naming: str | None = Field(
        default=None,
        description="Set when the request named no function: what the team named it (SolveConfig.name_function).",
    )
    p_correct: float | None = Field(
        default=None,
        description="Estimated probability that the answer is correct, from what the team saw before grading "
        "(memdoor.select.calibration); None when no calibration is installed or there is no answer.",
    )
    p_correct_basis: str | None = Field(default=None, description="What that estimate was fitted on.")
    ledger: Ledger = Field(default_factory=Ledger, description="Every model call made.")
    trace_id: str = Field(default="", description="Id of the recorded trace (memdoor trace ID).")
    error: str | None = Field(default=None, description="Set when the run failed as a whole.")
    error_type: str | None = Field(
        default=None, description="Qualified type name of the error that failed the run (with ``error``)."
    )
    # Grading, filled in by the runner after the strategy returned (hidden tests never reach strategies):
    verdict: Verdict | None = Field(default=None, description="Chosen code on public + hidden tests.")
    passed: bool | None = Field(default=None, description="verdict.passed, once graded.")
    oracle: bool | None = Field(default=None, description="Whether any candidate passes all tests.")
    draft_verdicts: list[Verdict | None] | None = Field(
        default=None,
        exclude=True,
        description="Each candidate's verdict on all tests (None: no code), when a report asked for them "
        "(RunEnv.grade_drafts); never part of a dump.",
    )
    _error_class: type[BaseException] | None = PrivateAttr(default=None)

    def record(self) -> SolutionRecord:
        """The one projection of this solution for answers and stores (no test contents but the inputs
        the team wrote itself)."""
        return SolutionRecord(
            problem_id=self.problem_id,
            strategy=self.strategy,
            code=self.code,
            language=self.language,
            agent=self.agent,
            agents=list(self.agents),
            confidence=self.confidence,
            agreement=self.agreement(),
            p_correct=self.p_correct,
            p_correct_basis=self.p_correct_basis,
            selection=None if self.selection is None else self.selection.reason,
            passed=self.passed,
            oracle=self.oracle,
            verdict=VerdictSummary.of(self.verdict),
            public=VerdictSummary.of(self.public_verdict),
            candidates=[
                CandidateSummary(
                    agent=c.agent, round=c.round, public=None if c.public is None else c.public.status
                )
                for c in self.candidates
            ],
            written_tests=[t.input for t in self.written_tests],
            stopped=self.stopped,
            failures=list(self.failures),
            error=self.error,
            error_type=self.error_type,
            trace_id=self.trace_id,
            totals=self.ledger.totals(),
        )

    def why_no_code(self) -> str:
        """Why the team produced no code, in one line: the run's error, else each failed agent's error,
        else that no candidate had a code block."""
        return self.error or (
            "; ".join(f"{f.agent}: {f.error}" for f in self.failures)
            or f"no candidate had a code block (stopped: {self.stopped})"
        )

    def signals(self) -> Signals | None:
        """The chosen answer's :class:`Signals`; None when the team produced no code."""
        if not self.code.strip():
            return None
        sel, cands = self.selection, self.candidates
        chosen = None
        if sel is not None and sel.index is not None and 0 <= sel.index < len(cands):
            chosen = cands[sel.index]
        if chosen is None:
            chosen = next((c for c in reversed(cands) if c.code.strip() == self.code.strip()), None)
        v = self.public_verdict
        return Signals(
            agree=1 if sel is None or sel.index is None else sel.agreeing(),
            pool=max(1, len(cands)),
            public_passed=0 if v is None else v.tests_passed,
            public_total=0 if v is None else v.tests_total,
            mean_logprob=None if chosen is None else chosen.mean_logprob,
            rule=None
            if sel is None
            else ("no-survivor" if sel.reason == "no-survivor" else sel.rule or sel.reason),
        )

    def agreement(self) -> str | None:
        """``3 of 5 agents agree`` (the chosen candidate's behaviour group against every candidate the
        selector weighed); None when no selector chose among several."""
        sel = self.selection
        if sel is None or sel.index is None or not sel.groups or len(self.candidates) < 2:
            return None
        authors = {c.agent for c in self.candidates}
        unit = "agents" if len(authors) == len(self.candidates) else "candidates"
        return f"{sel.agreeing()} of {len(self.candidates)} {unit} agree"

    @property
    def error_class(self) -> type[BaseException] | None:
        """The type of the error that failed the run, in this process (callers decide by ``issubclass``,
        never by message); None when the run did not fail or the Solution was read back from a record."""
        return self._error_class

    def failed_with(self, error: BaseException | None) -> Solution:
        """A copy of this solution stopped by ``error`` (``interrupted`` when None), its type kept."""
        kind = None if error is None else type(error)
        out = self.model_copy(
            update={
                "error": "interrupted" if kind is None else f"{kind.__name__}: {error}",
                "error_type": None if kind is None else qualified_name(kind),
                "stopped": "error",
            }
        )
        out._error_class = kind
        return out
