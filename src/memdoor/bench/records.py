"""Records kept in a bench results directory: the run, its problems, and one result per (problem, row)."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from memdoor.bench.config import BenchConfig
from memdoor.core.problem import Problem


class RunRecord(BaseModel):
    """What a results directory holds the results of."""

    config: BenchConfig = Field(description="The run's configuration (identity + the suite as given).")
    problems_sha256: str = Field(description="Digest of the selected problems (content and order).")
    problem_count: int = Field(description="How many problems were selected.")
    versions: dict[str, str] = Field(
        default_factory=dict, description="Package versions and sandbox isolation when the run was created."
    )
    created_at: str = Field(default="", description="UTC time the directory was created (ISO 8601).")


class ProblemInfo(BaseModel):
    """What reports and exports need to know about a problem (never its tests)."""

    id: str = Field(description="Problem id.")
    position: int = Field(description="0-based position in the run's problem order.")
    title: str = Field(default="", description="Short title.")
    difficulty: str | None = Field(default=None, description="easy / medium / hard, when known.")
    platform: str | None = Field(default=None, description="leetcode, atcoder, humaneval, ...")
    release_date: date | None = Field(default=None, description="Release date, when known.")
    func_name: str | None = Field(default=None, description="Entry point for functional tests.")
    grading_prefix: str = Field(
        default="", description="Code placed before the candidate when grading (HumanEval's prompt)."
    )
    hidden_tests: int = Field(
        default=0, description="Number of hidden tests (0: graded on the public tests the agents saw)."
    )
    language: str = Field(default="python", description="The language answers are written in.")
    public_tests: int | None = Field(
        default=None, description="Number of public tests the agents saw (None: not recorded, an older run)."
    )

    @property
    def examples(self) -> str | None:
        """``with`` or ``without`` public tests (None when not recorded): the report's breakdown by it."""
        return None if self.public_tests is None else ("with" if self.public_tests else "without")

    @classmethod
    def of(cls, problem: Problem, position: int) -> ProblemInfo:
        return cls(
            id=problem.id,
            position=position,
            title=problem.title,
            difficulty=problem.difficulty,
            platform=problem.platform,
            release_date=problem.release_date,
            func_name=problem.func_name,
            grading_prefix=problem.grading_prefix,
            hidden_tests=len(problem.hidden_tests),
            language=problem.language,
            public_tests=len(problem.public_tests),
        )

    @property
    def release_month(self) -> str | None:
        return None if self.release_date is None else self.release_date.strftime("%Y-%m")


Status = Literal["done", "error"]


class ResultRecord(BaseModel):
    """The outcome of one row on one problem, as stored (one per (problem, row), ever)."""

    problem_id: str = Field(description="Problem id.")
    row: str = Field(description="Row name (``parallel:5``, ``single@local:...``).")
    status: Status = Field(
        description="done: the runner returned a graded solution; error: the run raised (counted as failed)."
    )
    passed: bool = Field(default=False, description="The chosen code passed every public and hidden test.")
    oracle: bool | None = Field(default=None, description="Some candidate passed every test (None: unknown).")
    code: str = Field(default="", description="The chosen code.")
    verdict_status: str | None = Field(default=None, description="Overall status of the graded verdict.")
    tests_passed: int | None = Field(default=None, description="Tests the chosen code passed.")
    tests_total: int | None = Field(default=None, description="Tests run on the chosen code.")
    candidates: int = Field(default=0, description="Candidates the team produced.")
    confidence: float | None = Field(default=None, description="Selector confidence.")
    stopped: str | None = Field(default=None, description="Why the strategy stopped (done, budget, ...).")
    calls: int = Field(default=0, description="Model calls made.")
    failed_calls: int = Field(default=0, description="Model calls that failed for good.")
    prompt_tokens: int = Field(default=0, description="Prompt tokens over all calls.")
    completion_tokens: int = Field(default=0, description="Completion tokens over all calls.")
    usd: float | None = Field(default=None, description="Dollars; None when some call was unpriced.")
    compute: float | None = Field(
        default=None,
        description="FLOPs over all calls (≈ 2 × parameters × tokens); None when some model's size is unknown.",
    )
    model_seconds: float = Field(default=0.0, description="Sum of call latencies (measured engine seconds).")
    wall_seconds: float = Field(default=0.0, description="Wall seconds of the whole solve, grading included.")
    strategy_seconds: float = Field(
        default=0.0,
        description="Wall seconds the team worked, as the runner's ledger records it (the strategy, "
        "not the final grading), 0 when unknown.",
    )
    trace_id: str = Field(default="", description="Trace id of the run.")
    error: str | None = Field(default=None, description="Error type and message, when the run failed.")
    error_type: str | None = Field(default=None, description="Qualified type name of the error raised.")
    retryable: bool = Field(
        default=False, description="The error was environmental (model endpoint, sandbox, memory store, OS)."
    )
    attempts: int = Field(default=1, description="How many times this pair was run (errors may be retried).")
    started_at: str = Field(default="", description="UTC start time, ISO 8601.")
    finished_at: str = Field(default="", description="UTC finish time, ISO 8601.")
    drafts: str | None = Field(
        default=None,
        description="For parallel rows, the drafts the selector chose from, as a JSON list of "
        ":class:`memdoor.bench.scaling.Draft` (public-test outcome, behaviour group, log-prob and the "
        "hidden-test verdict, graded for the report only), for scaling curves.",
    )
    signals: str | None = Field(
        default=None,
        description="What the team saw of its answer before grading (agreement, public tests, log-prob, "
        "selection rule), as :class:`memdoor.core.solution.Signals` JSON: the data confidence is calibrated on.",
    )
    verdict_json: str | None = Field(default=None, description="The graded verdict, as JSON.")
    ledger_json: str | None = Field(default=None, description="The full cost ledger, as JSON.")
    trace_path: str | None = Field(
        default=None,
        description="Trace file (events and final answer) relative to the results directory, e.g. "
        "``traces/ID.json`` (read it with ``memdoor trace ID --dir DIR/traces``).",
    )
    trace_json: str | None = Field(
        default=None, description="The trace record as JSON, kept here only when no trace file was written."
    )
    solution_json: str | None = Field(default=None, description="The whole Solution, as JSON.")

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def seconds(self) -> float:
        """Seconds of the run: the runner's own timing, or the bench's when the runner gave none."""
        return self.strategy_seconds or self.wall_seconds

    def detail(self) -> dict[str, Any]:
        """The short fields (no JSON blobs), for listings."""
        return self.model_dump(exclude={"verdict_json", "ledger_json", "trace_json", "solution_json"})
