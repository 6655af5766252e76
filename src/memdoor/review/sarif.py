"""The review as SARIF 2.1.0, the format code-scanning tools and CI dashboards read.

One run, tool ``memdoor`` with one rule per kind (``memdoor/bug``, ``memdoor/security``, ...). Each
consensus finding is a result: level ``error`` (critical, high), ``warning`` (medium) or ``note``
(low, info); its location is the file (relative to the repository root, ``%SRCROOT%``, as a
percent-encoded URI reference: ``a b#1.py`` is ``a%20b%231.py``) and line range of the changed code; ``properties`` carry the severity, the agents that agreed and the confidence; a
suggested change is a ``fix`` replacing those lines. ``invocations[0].executionSuccessful`` is false, with a
``toolExecutionNotifications`` entry giving the reason, when the review was not completed (a note, when there was nothing to review). Minority findings are not results (they are not
what the team agreed on); the run's ``properties`` count them and name the trace.

Each result's message starts with ``[verified]`` (an execution reproduced it: a failing test, or an
input whose old and new results differ, given after the message as its counterexample) or
``[unverified]`` (the agents read it; nothing ran it); ``properties.verified`` says the same. A reading
finding an execution reproduced is merged into that result (:mod:`memdoor.review.corroborate`): its
message ends "Also raised by the reading review", ``properties.also_read`` says who, where and what,
and the fingerprint stays the execution finding's.

``partialFingerprints["memdoor/v1"]`` keeps one code-scanning alert per problem across pushes: a sha256
of the rule, the file and what the problem is, never a line number. What the problem is: for the
reading review, the flagged lines' text (each line's blanks collapsed, blank lines dropped), so lines
inserted above keep the fingerprint; for a failing test, the test's name; for a difference shown by
running an input, the function's name and the kinds of its two outcomes (``returns``, ``raises
ValueError``, ``exits 1``: never the values, which another input shows otherwise), since one function
may show up to three kinds of difference (an execution finding's place is where the change starts, which
the next push may move, while the failing test or the function stays the same problem). Two results of
one run never share a fingerprint (code scanning would merge them into one alert): a repeated one (two
reading findings on lines that cannot be read, the same kind of difference twice) is hashed again with
its occurrence, ``:2``, ``:3``…, in the report's order.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memdoor import __version__
from memdoor.review.consensus import Group
from memdoor.review.context import read_lines
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


FINGERPRINT = "memdoor/v1"
MAX_FLAGGED_LINES = 200
"""Flagged lines read for a fingerprint at most."""
_BLANKS = re.compile(r"\s+")


_OUTCOME = re.compile(
    r"(returns|crashes|runs out of memory|does not finish|cannot be called)\b"
    r"|raises ([^\s:,]+)"
    r"|prints (?:nothing|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")…?"
    r"(?: and exits with status (\S+)|, then (panics|raises) ?([^\s:,]*))"
)
"""The parts of an outcome as :meth:`CallOutcome.show` words it that say what kind it is: returns, raises
a type, cannot be called, does not finish, runs out of memory, crashes; a program's exit status, or the
panic or exception it ends with."""


def rule_id(kind: str) -> str:
    return f"memdoor/{kind}"


def uri(path: str) -> str:
    """``path`` (relative to ``%SRCROOT%``) as a URI reference: percent-encoded (a space, ``#``, ``%``, ``?``,
    ``:``, anything not ASCII; a name that is not UTF-8 by its bytes), its ``/`` kept."""
    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def outcome_kind(shown: str) -> str:
    """What kind of outcome a counterexample's side is, without its values (which the next push's input
    may change): ``returns``, ``raises ValueError``, ``exits 1``, ``panics``, ``does not finish``…"""
    m = _OUTCOME.match(shown)
    if m is None:
        return shown.split(" ", 1)[0]
    if m[2] is not None:
        return f"raises {m[2]}"
    if m[3] is not None:
        return f"exits {m[3]}"
    if m[4] is not None:
        return f"{m[4]} {m[5]}".rstrip()
    return m[1] or ""


def problem(g: Group) -> str:
    """What a finding is about, without where, from the stage that showed it: the function of its
    counterexample and the kinds of its two outcomes (differential: the stage keeps up to three
    differences of one function, one per kind), the test it breaks or the broken test run (tests), or
    its kind (the reading review)."""
    if g.source == "differential":
        c = g.counterexample
        if c is None:
            return "call:"
        return f"call:{c.function}\0{outcome_kind(c.old)}\0{outcome_kind(c.new)}"
    if g.source == "tests":
        return "test-run" if g.test is None else f"test:{g.test}"
    return f"read:{g.kind}"


def flagged_text(g: Group, source: Path | None) -> str:
    """The finding's lines in the changed tree ``source``, normalized (blanks collapsed, blank lines
    dropped); empty when unknown (no tree, a file missing, not text, a link)."""
    lines = read_lines(source, g.file) if source is not None else None
    if not lines:
        return ""
    picked = lines[g.line - 1 : min(g.end_line, g.line - 1 + MAX_FLAGGED_LINES)]
    return "\n".join(t for t in (_BLANKS.sub(" ", line).strip() for line in picked) if t)


def fingerprint(g: Group, source: Path | None = None) -> str:
    """sha256 of the rule, the file and the problem: the flagged lines' text for the reading review,
    the test or function for an execution finding (:func:`problem`); no line number. A test stage's
    finding leaves the file out: it stands at the change's first changed file, which the next push can
    make another (a file that sorts earlier edited too), while the broken test stays the same."""
    what = problem(g)
    lines = "" if g.source != "agents" else flagged_text(g, source)
    where = "" if g.source == "tests" else g.file
    text = "\0".join([rule_id(g.kind), where, what, lines])
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def fingerprints(groups: list[Group], source: Path | None = None) -> list[str]:
    """Each finding's :func:`fingerprint`, made distinct within the run: one that an earlier finding
    already has (two reading findings on lines that cannot be read, the same kind of difference twice)
    is hashed again with its occurrence (``:2``, ``:3``…, in the report's order), as GitHub's own
    fingerprints count occurrences; the first keeps its fingerprint. Code scanning would merge results
    with one fingerprint into one alert."""
    seen: dict[str, int] = {}
    out = []
    for g in groups:
        fp = fingerprint(g, source)
        seen[fp] = seen.get(fp, 0) + 1
        out.append(fp if seen[fp] == 1 else hashlib.sha256(f"{fp}:{seen[fp]}".encode()).hexdigest())
    return out


def message_text(g: Group) -> str:
    """The message, marked verified or unverified, with the counterexample when there is one."""
    text = f"[{'verified' if g.verified else 'unverified'}] {g.message}"
    c = g.counterexample
    if c is not None:
        text += f"\nCall: {c.function}({c.input})\nBase: {c.old}\nChange: {c.new}"
    if g.also_read:
        agents = sorted({a for r in g.also_read for a in r.agents})
        text += f"\nAlso raised by the reading review ({len(agents)} agent(s): {', '.join(agents)})."
    return text


def _location(g: Group) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": uri(g.file), "uriBaseId": "%SRCROOT%"},
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
                "artifactLocation": {"uri": uri(g.file), "uriBaseId": "%SRCROOT%"},
                "replacements": [
                    {
                        "deletedRegion": {"startLine": g.line, "endLine": g.end_line},
                        "insertedContent": {"text": text},
                    }
                ],
            }
        ],
    }


def result(g: Group, source: Path | None = None, fp: str | None = None) -> dict[str, Any]:
    """One finding as a result; ``source``: the changed tree, whose flagged lines the fingerprint reads;
    ``fp``: its fingerprint made distinct in the run (:func:`fingerprints`; default :func:`fingerprint`)."""
    example = g.counterexample.model_dump() if g.counterexample is not None else None
    out: dict[str, Any] = {
        "ruleId": rule_id(g.kind),
        "ruleIndex": KINDS.index(g.kind),
        "level": LEVELS[g.severity],
        "message": {"text": message_text(g)},
        "locations": [_location(g)],
        "partialFingerprints": {FINGERPRINT: fp or fingerprint(g, source)},
        "properties": {
            "severity": g.severity,
            "verified": g.verified,
            "agents": g.agents,
            "confidence": g.confidence,
            "counterexample": example,
            "also_read": [a.model_dump() for a in g.also_read],
        },
    }
    if g.suggestion is not None:
        out["fixes"] = [_fix(g)]
    return out


def invocation(report: ReviewReport) -> dict[str, Any]:
    """``executionSuccessful`` false (with a notification saying why) when the review was not completed;
    a note saying why when there was nothing to review."""
    out: dict[str, Any] = {"executionSuccessful": report.complete}
    if not report.complete:
        out["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": f"review not completed: {report.incomplete_reason}"}}
        ]
    elif report.nothing_to_review is not None:
        out["toolExecutionNotifications"] = [
            {"level": "note", "message": {"text": f"nothing to review: {report.nothing_to_review}"}}
        ]
    return out


def to_sarif(report: ReviewReport, source: Path | None = None) -> dict[str, Any]:
    """The report as one SARIF run; ``source``: the changed tree (for the fingerprints; without it a
    reading finding's fingerprint has no line text)."""
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
                "results": [
                    result(g, source, fp)
                    for g, fp in zip(report.findings, fingerprints(report.findings, source), strict=True)
                ],
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
