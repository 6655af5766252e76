"""The review as SARIF 2.1.0, the format code-scanning tools and CI dashboards read.

One run, tool ``memdoor`` with one rule per kind (``memdoor/bug``, ``memdoor/security``, ...). Each
consensus finding is a result: level ``error`` (critical, high), ``warning`` (medium) or ``note``
(low, info); its location is the file (relative to the repository root, ``%SRCROOT%``) and line range
of the changed code; ``properties`` carry the severity, the agents that agreed and the confidence; a
suggested change is a ``fix`` replacing those lines. ``invocations[0].executionSuccessful`` is false, with a
``toolExecutionNotifications`` entry giving the reason, when the review was not completed. Minority findings are not results (they are not
what the team agreed on); the run's ``properties`` count them and name the trace.
"""

from __future__ import annotations

from typing import Any

from memdoor import __version__
from memdoor.review.consensus import Group
from memdoor.review.findings import KINDS
from memdoor.review.session import ReviewReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
RULE_TEXT = {
    "bug": "A defect in the changed code: wrong logic, a missed case, broken error handling.",
    "security": "A security problem in the changed code.",
    "performance": "A performance problem in the changed code.",
    "style": "A style or maintainability problem in the changed code.",
}


def rule_id(kind: str) -> str:
    return f"memdoor/{kind}"


def _location(g: Group) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": g.file, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": g.line, "endLine": g.end_line},
        }
    }


def _fix(g: Group) -> dict[str, Any]:
    text = g.suggestion or ""
    if text and not text.endswith("\n"):
        text += "\n"
    return {
        "description": {"text": "The change the agents suggest."},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": g.file, "uriBaseId": "%SRCROOT%"},
                "replacements": [
                    {
                        "deletedRegion": {"startLine": g.line, "endLine": g.end_line},
                        "insertedContent": {"text": text},
                    }
                ],
            }
        ],
    }


def result(g: Group) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": rule_id(g.kind),
        "ruleIndex": KINDS.index(g.kind),
        "level": LEVELS[g.severity],
        "message": {"text": g.message},
        "locations": [_location(g)],
        "properties": {"severity": g.severity, "agents": g.agents, "confidence": g.confidence},
    }
    if g.suggestion is not None:
        out["fixes"] = [_fix(g)]
    return out


def invocation(report: ReviewReport) -> dict[str, Any]:
    """``executionSuccessful`` false (with a notification saying why) when the review was not completed."""
    out: dict[str, Any] = {"executionSuccessful": report.complete}
    if not report.complete:
        out["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": f"review not completed: {report.incomplete_reason}"}}
        ]
    return out


def to_sarif(report: ReviewReport) -> dict[str, Any]:
    rules = [
        {
            "id": rule_id(kind),
            "name": kind.capitalize(),
            "shortDescription": {"text": RULE_TEXT[kind]},
            "defaultConfiguration": {"level": "warning"},
        }
        for kind in KINDS
    ]
    return {
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "memdoor",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "invocations": [invocation(report)],
                "results": [result(g) for g in report.findings],
                "properties": {
                    "agents": report.agents,
                    "quorum": report.quorum,
                    "minority": len(report.minority),
                    "trace_id": report.trace_id,
                    "skipped": [s.model_dump() for s in report.skipped],
                },
            }
        ],
    }
