"""What a reviewer reports (:class:`Finding`) and how an agent's answer is read into findings.

Agents answer with JSON in a fenced block: ``{"findings": [{"file", "line", "end_line", "severity",
"kind", "message", "suggestion", "confidence"}]}``. Reading is forgiving about the wrapping (a bare
list, the last fenced block, JSON without a fence, severity/kind in any case, a line as text) and
strict about the content: a finding that does not fit the schema is dropped and counted; an answer
with no readable JSON at all is an :class:`AgentReview` with ``error`` set, recorded and ignored.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memdoor.core.errors import first_problem
from memdoor.text.answer_blocks import candidates

SEVERITIES: tuple[str, ...] = ("info", "low", "medium", "high", "critical")
"""Severities, least to most severe (``--fail-on`` takes one of them)."""
KINDS: tuple[str, ...] = ("bug", "security", "performance", "style")

Severity = Literal["info", "low", "medium", "high", "critical"]
Kind = Literal["bug", "security", "performance", "style"]

MAX_MESSAGE = 2000
MAX_SUGGESTION = 20_000
MAX_FINDINGS = 50
"""Findings read from one answer at most (the rest are counted as dropped)."""
MAX_ANSWER_CHARS = 400_000
"""Characters of an agent's answer read for its findings (the rest is cut before it is parsed)."""
MAX_EXAMPLE_TEXT = 2000
"""Characters kept of each text of a :class:`Counterexample` (longer text is cut, marked ``…``)."""
MAX_FUNCTION = 200


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


class Finding(BaseModel):
    """One problem a reviewer found, at a place in the changed code (new-file line numbers)."""

    file: str = Field(description="Path in the repository, as in the diff.")
    line: int = Field(ge=1, description="First line of the problem in the changed file.")
    end_line: int = Field(ge=1, description="Last line (the same as line for one line).")
    severity: Severity = Field(description="info, low, medium, high or critical.")
    kind: Kind = Field(description="bug, security, performance or style.")
    message: str = Field(min_length=1, max_length=MAX_MESSAGE, description="A short explanation.")
    suggestion: str | None = Field(
        default=None,
        max_length=MAX_SUGGESTION,
        description="Replacement text for lines line..end_line (the whole lines), when the reviewer has one.",
    )
    confidence: float | None = Field(
        default=None, ge=0.0, le=1.0, description="The reviewer's stated confidence, 0..1, when given."
    )

    @field_validator("severity", "kind", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("file", mode="before")
    @classmethod
    def _path(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip()
            v = v[2:] if v[:2] in ("a/", "b/", "./") else v
        return v

    @field_validator("confidence", mode="before")
    @classmethod
    def _finite(cls, v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v

    @model_validator(mode="before")
    @classmethod
    def _end_line(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("end_line") in (None, ""):
            data = {**data, "end_line": data.get("line")}
        return data

    @model_validator(mode="after")
    def _ordered(self) -> Finding:
        if self.end_line < self.line:
            self.line, self.end_line = self.end_line, self.line
        return self


def _cut(v: Any, limit: int) -> Any:
    return v[: limit - 1] + "…" if isinstance(v, str) and len(v) > limit else v


class Counterexample(BaseModel):
    """An execution that shows a finding: a call of ``function`` with ``input`` whose result on the base
    (``old``) and on the changed code (``new``) differ, or a failing test (``function`` the test's name).
    Every text comes from running untrusted code: it is bounded here (cut to :data:`MAX_EXAMPLE_TEXT`
    characters) and fenced wherever it enters a prompt."""

    model_config = ConfigDict(extra="forbid")

    function: str = Field(min_length=1, max_length=MAX_FUNCTION, description="The function (or test) run.")
    input: str = Field(max_length=MAX_EXAMPLE_TEXT, description="The call's arguments, as text.")
    old: str = Field(max_length=MAX_EXAMPLE_TEXT, description="Result (or exception) on the base.")
    new: str = Field(max_length=MAX_EXAMPLE_TEXT, description="Result (or exception) after the change.")

    @field_validator("function", mode="before")
    @classmethod
    def _cut_name(cls, v: Any) -> Any:
        return _cut(v, MAX_FUNCTION)

    @field_validator("input", "old", "new", mode="before")
    @classmethod
    def _cut_text(cls, v: Any) -> Any:
        return _cut(v, MAX_EXAMPLE_TEXT)


class AlsoRead(BaseModel):
    """A reading-review finding merged into the execution finding that shows the same problem
    (:mod:`memdoor.review.corroborate`): who raised it, where, what they said and suggested."""

    model_config = ConfigDict(extra="forbid")

    agents: list[str] = Field(description="The reading agents that raised it.")
    consensus: bool = Field(description="Raised by ⌈N/2⌉ of the agents (else it was a minority finding).")
    line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    severity: Severity
    message: str
    suggestion: str | None = Field(
        default=None, description="The replacement lines it proposed, when it had one."
    )


VERIFIED_TEXT = (
    "a finding reproduced by execution: a failing test or an input whose old and new results differ"
)
"""What ``verified`` means (the reported finding, :class:`memdoor.review.consensus.Group`, carries it;
an agent's answer cannot set it: :class:`Finding` has no such field)."""


class AgentReview(BaseModel):
    """What one agent answered on one part of the diff."""

    agent: str
    part: str = Field(description="The file (part of the diff) the agent reviewed.")
    findings: list[Finding] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list, description="Why findings were dropped (schema, file).")
    error: str | None = Field(default=None, description="Why the answer was unusable (it is then ignored).")
    budget: bool = Field(default=False, description="No answer: the review's budget was spent.")
    unreadable: bool = Field(
        default=False, description="The model answered, but with no readable findings JSON."
    )
    mean_logprob: float | None = Field(default=None, description="Mean token log-probability of the answer.")


def _decode(text: str) -> Any:
    text = text[:MAX_ANSWER_CHARS]
    for candidate in candidates(text):  # fenced blocks, the whole text, its {...} and [...] spans
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    raise ValueError("no JSON object with findings in the answer")


EXAMPLE_TEXTS = frozenset({"what is wrong and why", "replacement lines"})
"""The placeholder texts of the prompts' example finding (any case): a finding that repeats one copied it."""


def parse_review(text: str, *, agent: str, part: str, files: set[str] | None = None) -> AgentReview:
    """The findings of one answer. ``files``: the files the agent may speak of (others are dropped)."""
    review = AgentReview(agent=agent, part=part)
    try:
        data = _decode(text)
    except ValueError as e:
        review.error, review.unreadable = str(e), True
        return review
    items = data.get("findings") if isinstance(data, dict) else data
    if not isinstance(items, list):
        review.error, review.unreadable = "the JSON answer has no 'findings' list", True
        return review
    for n, item in enumerate(items):
        if n >= MAX_FINDINGS:
            review.dropped.append(f"{len(items) - MAX_FINDINGS} findings over the limit of {MAX_FINDINGS}")
            break
        if isinstance(item, dict) and "file" not in item:
            item = {**item, "file": part}
        try:
            finding = Finding.model_validate(item)
        except ValidationError as e:
            where, why = first_problem(e)
            review.dropped.append(f"finding {n}: {where or 'value'}: {why}")
            continue
        if finding.message.strip().lower() in EXAMPLE_TEXTS:
            review.dropped.append(f"finding {n}: it copies the prompt's example")
            continue
        if finding.suggestion is not None and finding.suggestion.strip().lower() in EXAMPLE_TEXTS:
            finding = finding.model_copy(update={"suggestion": None})  # the place may be right; not the text
        if files is not None and finding.file not in files:
            review.dropped.append(f"finding {n}: file {finding.file!r} is not in this part of the diff")
            continue
        review.findings.append(finding)
    return review
