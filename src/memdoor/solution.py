"""A strategy's result on one problem, and its grading on hidden tests (done outside the strategy)."""

from __future__ import annotations

from pydantic import BaseModel, Field, PrivateAttr

from memdoor.errors import qualified_name
from memdoor.ledger import Ledger
from memdoor.problems.model import TestCase
from memdoor.sandbox.verdict import Verdict
from memdoor.select.types import Candidate, Selection


class AgentFailure(BaseModel):
    """An agent that dropped out (its endpoint failed for good)."""

    agent: str
    error: str = Field(description="Error type and message.")


class Solution(BaseModel):
    """What a team produced for one problem."""

    problem_id: str
    strategy: str = Field(description="Strategy name as configured, e.g. parallel:5.")
    code: str = Field(default="", description="The chosen code ('' when the team produced none).")
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
    _error_class: type[BaseException] | None = PrivateAttr(default=None)

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
