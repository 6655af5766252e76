"""Grouping the agents' findings into problems, and the ⌈N/2⌉ rule.

Two findings are the same problem when they are in the **same place** — the same file, line ranges
that overlap once each is widened by ``NEAR_LINES`` — and say the **same thing**: the same kind, or
messages that share most of their words (a bug one agent calls ``security`` is still that bug). Words
alone never group findings in different places. Among the groups a finding could join, it joins the
one whose messages are most like its own, preferring a group its agent is not in yet; each agent counts
once per group however many times it repeats itself.

A group raised by at least ⌈N/2⌉ of the N agents of the team is a **consensus** finding (3 of 5, 2 of 3
or 4, 1 of 1 or 2); the others are **minority** findings, ranked by how many agents raised them, then
by confidence (token log-probabilities of the answers when the model gave them, else the agents'
stated confidence).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from memdoor.review.findings import (
    SEVERITIES,
    VERIFIED_TEXT,
    AgentReview,
    AlsoRead,
    Counterexample,
    Finding,
    Kind,
    Severity,
    severity_rank,
)

Source = Literal["agents", "tests", "differential"]
"""The stage that showed a finding: the reading review's agents, the test command (a test the change
breaks, or the broken test run), or the differential stage (an input run on base and change)."""
NEAR_LINES = 3
"""Line ranges this close (after widening each by this many lines) are the same place."""
SAME_WORDS = 0.5
"""Word overlap (Jaccard) at or above which two messages in the same place are the same problem."""
_WORD = re.compile(r"[a-z0-9_]+")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an the is are be to of in on at for and or not no it this that with as by can may will when if "
        "should could would which there here its from",
    )
)


def quorum(agents: int) -> int:
    """⌈N/2⌉: how many of N agents make a consensus."""
    return max(1, math.ceil(agents / 2))


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


def similarity(a: str, b: str) -> float:
    """Word overlap of two messages (Jaccard, 0..1)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


class Raised(BaseModel):
    """A finding as one agent raised it, with the confidence it carries."""

    agent: str
    finding: Finding
    confidence: float | None = None


class Group(BaseModel):
    """One problem, as reported: where, what, and who agreed."""

    file: str
    line: int
    end_line: int
    severity: Severity
    kind: Kind
    message: str
    suggestion: str | None = None
    agents: list[str] = Field(description="Agents that raised it (each once).")
    confidence: float | None = Field(default=None, description="Mean confidence of its findings, if known.")
    verified: bool = Field(default=False, description=VERIFIED_TEXT[0].upper() + VERIFIED_TEXT[1:] + ".")
    counterexample: Counterexample | None = Field(default=None, description="The execution that shows it.")
    source: Source = Field(
        default="agents", description="The stage that showed it: agents, tests, differential."
    )
    test: str | None = Field(
        default=None, description="The test the change breaks (tests; None for a broken test run)."
    )
    also_read: list[AlsoRead] = Field(
        default_factory=list,
        description="Reading-review findings of the same problem, merged into this execution finding.",
    )
    members: list[Raised] = Field(default_factory=list, exclude=True)

    def near(self, f: Finding) -> bool:
        return f.file == self.file and any(
            m.finding.line - NEAR_LINES <= f.end_line + NEAR_LINES
            and f.line - NEAR_LINES <= m.finding.end_line + NEAR_LINES
            for m in self.members
        )

    def likeness(self, f: Finding) -> float:
        return max(similarity(f.message, m.finding.message) for m in self.members)


class Consensus(BaseModel):
    agents: int = Field(description="Team size N.")
    quorum: int = Field(description="⌈N/2⌉.")
    findings: list[Group] = Field(default_factory=list)
    minority: list[Group] = Field(default_factory=list)


def confidence_of(review: AgentReview, finding: Finding) -> float | None:
    """exp(mean token log-probability) of the answer when known, else the agent's stated confidence."""
    if review.mean_logprob is not None:
        return math.exp(min(review.mean_logprob, 0.0))
    return finding.confidence


def _fits(group: Group, r: Raised) -> bool:
    f = r.finding
    return group.near(f) and (f.kind == group.members[0].finding.kind or group.likeness(f) >= SAME_WORDS)


def group_findings(reviews: Sequence[AgentReview]) -> list[Group]:
    """Every finding of every usable answer, grouped (see the module's rule); in file and line order."""
    raised = [
        Raised(agent=r.agent, finding=f, confidence=confidence_of(r, f))
        for r in reviews
        if r.error is None
        for f in r.findings
    ]
    raised.sort(key=lambda r: (r.finding.file, r.finding.line, r.finding.end_line, r.agent))
    groups: list[Group] = []
    for r in raised:
        fitting = [g for g in groups if _fits(g, r)]
        if fitting:
            best = max(fitting, key=lambda g: (r.agent not in g.agents, g.likeness(r.finding)))
            best.members.append(r)
            if r.agent not in best.agents:
                best.agents.append(r.agent)
        else:
            f = r.finding
            groups.append(
                Group(
                    file=f.file,
                    line=f.line,
                    end_line=f.end_line,
                    severity=f.severity,
                    kind=f.kind,
                    message=f.message,
                    agents=[r.agent],
                    members=[r],
                )
            )
    return [_summarise(g) for g in groups]


def _summarise(g: Group) -> Group:
    """The group's place and words from its most confident finding; severity the median of its findings
    (rounded up); the suggestion of the most confident finding that has one."""
    ranked = sorted(g.members, key=lambda m: -(m.confidence if m.confidence is not None else 0.5))
    top = ranked[0].finding
    known = [m.confidence for m in g.members if m.confidence is not None]
    ranks = sorted(severity_rank(m.finding.severity) for m in g.members)
    severity = SEVERITIES[ranks[len(ranks) // 2]]
    suggestion = next((m.finding.suggestion for m in ranked if m.finding.suggestion is not None), None)
    kinds = [m.finding.kind for m in g.members]
    return g.model_copy(
        update={
            "line": top.line,
            "end_line": top.end_line,
            "message": top.message,
            "kind": max(set(kinds), key=lambda k: (kinds.count(k), k == top.kind)),
            "severity": severity,
            "suggestion": suggestion,
            "agents": sorted(g.agents),
            "confidence": round(statistics.fmean(known), 4) if known else None,
        }
    )


def decide(reviews: Sequence[AgentReview], agents: int) -> Consensus:
    """Consensus and minority findings of a team of ``agents`` (N counts every agent of the team, also
    those whose answer was unusable: silence is not agreement)."""
    need = quorum(agents)
    groups = group_findings(reviews)
    agreed = [g for g in groups if len(g.agents) >= need]
    agreed.sort(key=lambda g: (-severity_rank(g.severity), g.file, g.line))
    minority = [g for g in groups if len(g.agents) < need]
    minority.sort(key=lambda g: (-len(g.agents), -(g.confidence or 0.0), g.file, g.line))
    return Consensus(agents=agents, quorum=need, findings=agreed, minority=minority)
