"""Scoring a review's JSON report on a case, and the tables of a run.

A case is **flagged** (SWR-Bench's counting) when the report has a consensus finding at high severity or
worse that is verified (an execution reproduced it: a failing test or a counterexample). Bugs (``missed``,
``caught``, ``mixed``) should be flagged; refactorings and intended changes should not. The reading review's
findings are unverified: ``flagged_any`` counts them too, so its row can be read both ways. Both count what
``memdoor review --fail-on high`` (with ``--fail-on-unverified`` for ``flagged_any``) would fail on, by the
review's own rule (memdoor.review.counting): ``flagged_any`` counts a reading review's consensus finding
merged into an execution finding (``also_read``) at its own severity.

The report's fields are read tolerantly: a report from before ``verified`` existed counts the test stage's
findings (``source`` "tests") and findings with a counterexample as verified; the differential stage's
record, where present, says why a missed bug was lost.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from typing import Any

from memdoor.bench.stats import wilson_ci
from memdoor.review.counting import at_or_above, counted_severities
from review_cases.records import BUGS

NEAR = 3
"""A finding within this many lines of a changed line is at the place."""

LOST = ("no input showed a difference", "shown but judged intended", "not reproduced")
"""Why the differential stage lost a bug, in the issue's words."""


def is_verified(finding: dict[str, Any]) -> bool:
    if "verified" in finding:
        return bool(finding["verified"])
    return finding.get("source") == "tests" or bool(finding.get("counterexample"))


def severe(finding: dict[str, Any], at_least: str = "high") -> bool:
    return at_or_above([str(finding.get("severity", "info"))], at_least)


def merged_reading(finding: dict[str, Any]) -> list[tuple[str, bool]]:
    """(severity, consensus) of each reading finding merged into ``finding`` (none in a report from before
    merging)."""
    also = finding.get("also_read")
    if not isinstance(also, list):
        return []
    return [(str(a.get("severity", "info")), a.get("consensus") is True) for a in also if isinstance(a, dict)]


def counted(finding: dict[str, Any], *, verified_only: bool) -> list[str]:
    """The severities the review's exit code counts ``finding`` at (verified findings only, or all)."""
    severity = str(finding.get("severity", "info"))
    return counted_severities(
        severity, is_verified(finding), merged_reading(finding), unverified=not verified_only
    )


def flagged(report: dict[str, Any], *, verified_only: bool = True) -> bool:
    """Whether the report flags the change: what ``--fail-on high`` fails on — a consensus finding at high
    or worse, verified (unless not ``verified_only``: then any, and the consensus reading findings merged
    into one at their own severity)."""
    findings = report.get("findings") or []
    return at_or_above((s for f in findings for s in counted(f, verified_only=verified_only)), "high")


def at_place(report: dict[str, Any], changed: list[int]) -> bool:
    """Whether a verified finding at high or worse is in solution.py within NEAR lines of a changed line."""
    for f in report.get("findings") or []:
        if not (severe(f) and is_verified(f)) or f.get("file") != "solution.py":
            continue
        line, end = f.get("line"), f.get("end_line") or f.get("line")
        numbered = isinstance(line, int) and isinstance(end, int)
        if numbered and any(line - NEAR <= c <= end + NEAR for c in changed):
            return True
    return False


def differential_record(report: dict[str, Any]) -> dict[str, Any] | None:
    """The differential stage's record in the JSON report (None when the stage did not run)."""
    rec = report.get("differential")
    return rec if isinstance(rec, dict) else None


OUTCOMES = {
    "no difference": LOST[0],
    "intended": LOST[1],
    "not reproduced": LOST[2],
    "reported": "shown, reported below high",
    "not run": "differential stage did not run",
    "none": "no changed function found",
}
"""The differential stage's ``outcome`` (review/differential/stage.py) in the issue's words."""


def _label(d: dict[str, Any]) -> str | None:
    for key in ("verdict", "intent", "classification", "judged", "label"):
        if isinstance(d.get(key), str):
            return d[key]
    return None


def lost_stage(report: dict[str, Any]) -> str:
    """Why a bug the report does not flag was lost: one of :data:`LOST`, another outcome of the stage's
    record, or why it cannot be told (no differential record in the report)."""
    rec = differential_record(report)
    if rec is None:
        return "no differential record"
    outcome = rec.get("outcome")
    if isinstance(outcome, str) and outcome:
        return OUTCOMES.get(outcome, outcome)
    differences = rec.get("differences") if isinstance(rec.get("differences"), list) else []
    judged = [_label(d) for d in differences if isinstance(d, dict) and d.get("reproduced", True)]
    if "intended" in judged:
        return LOST[1]
    if judged:
        return OUTCOMES["reported"]
    return LOST[2] if rec.get("not_reproduced") else LOST[0]


def stage_seconds(report: dict[str, Any]) -> dict[str, float]:
    """Seconds per stage, as far as the report records them: the test command's runs (base and change),
    the differential stage, the reading review (reports from before it was timed: none), and the rest of
    the review's wall time (set-up; with an older report, the reading review too)."""
    out: dict[str, float] = {}
    for name, field in (("tests (base)", "base_tests"), ("tests (change)", "tests")):
        run = report.get(field)
        if isinstance(run, dict) and isinstance(run.get("seconds"), int | float):
            out[name] = float(run["seconds"])
    rec = differential_record(report)
    if rec is not None and isinstance(rec.get("seconds"), int | float):
        out["differential"] = float(rec["seconds"])
    timed = isinstance(report.get("reading_seconds"), int | float)
    if timed:
        out["reading"] = float(report["reading_seconds"])
    wall = (report.get("ledger") or {}).get("wall_seconds")
    if isinstance(wall, int | float) and out:
        ran = report.get("stages_run")
        reading = "reading" in ran if isinstance(ran, list) else True  # not said: it may have run
        untimed = reading and not timed  # a report from before it was timed, or a review that failed
        out["rest (reading, set-up)" if untimed else "rest (set-up)"] = max(
            0.0, float(wall) - sum(out.values())
        )
    return out


def score(report: dict[str, Any], kind: str, changed: list[int]) -> dict[str, Any]:
    """What a row records of a report: flags, the place, why a missed bug was lost, the findings compactly."""
    hit = flagged(report)
    ledger = report.get("ledger") or {}
    return {
        "flagged": hit,
        "flagged_any": flagged(report, verified_only=False),
        "at_place": at_place(report, changed) if kind in BUGS else None,
        "lost": lost_stage(report) if kind in BUGS and not hit else None,
        "complete": report.get("complete"),
        "error": report.get("error"),
        "tokens": (ledger.get("prompt_tokens") or 0) + (ledger.get("completion_tokens") or 0),
        "calls": ledger.get("calls"),
        "compute": ledger.get("compute"),
        "seconds": ledger.get("wall_seconds"),
        "stage_seconds": stage_seconds(report),
        "trace_id": report.get("trace_id"),
        "findings": [
            {k: f.get(k) for k in ("file", "line", "end_line", "severity", "kind", "source")}
            | {"verified": is_verified(f), "counterexample": bool(f.get("counterexample"))}
            for f in report.get("findings") or []
        ],
    }


def rate(values: list[bool]) -> str:
    if not values:
        return "-"
    lo, hi = wilson_ci(sum(values), len(values))
    return f"{sum(values)}/{len(values)} [{lo:.2f}, {hi:.2f}]"


def f1_of(rows: list[dict[str, Any]], key: str) -> float:
    tp = sum(1 for r in rows if r["kind"] in BUGS and r[key])
    fp = sum(1 for r in rows if r["kind"] not in BUGS and r[key])
    fn = sum(1 for r in rows if r["kind"] in BUGS and not r[key])
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def f1_text(rows: list[dict[str, Any]], key: str, resamples: int = 2000) -> str:
    """F1 over the cases and its percentile bootstrap 95% interval (cases resampled; seeded). F1 is not a
    proportion of trials, so it gets a bootstrap interval where the rates get Wilson's. The cases are put
    in one order first (by case), so the same outcomes give the same interval whatever order a run wrote
    them in."""
    if not rows:
        return "-"
    rows = sorted(rows, key=lambda r: (str(r.get("case", "")), str(r.get("digest", ""))))
    rng = random.Random(0)
    draws = sorted(f1_of([rng.choice(rows) for _ in rows], key) for _ in range(resamples))
    lo, hi = draws[int(0.025 * resamples)], draws[int(0.975 * resamples) - 1]
    return f"{f1_of(rows, key):.2f} [{lo:.2f}, {hi:.2f}]"


def team_label(agents: int, models: list[str]) -> str:
    """A team as a reader says it: "5 × qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b + 4 × qwen2.5-coder-0.5b"."""
    names = [models[i % len(models)].split(":", 1)[-1] for i in range(agents)]
    counts = Counter(names)
    return " + ".join(n if counts[n] == 1 else f"{counts[n]} × {n}" for n in dict.fromkeys(names))


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def groups(rows: list[dict[str, Any]]) -> dict[tuple, list[dict[str, Any]]]:
    out: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["stages"], r["agents"], tuple(r["models"])), []).append(r)
    return out


def summary(rows: list[dict[str, Any]], key: str = "flagged") -> str:
    """One Markdown row per (stages, team): recall on caught, missed and mixed bugs, false alarms on
    refactorings and intended changes (Wilson 95% intervals), precision and recall over all cases
    (Wilson), F1 (bootstrap), and medians per case of tokens, compute and seconds."""
    out = [
        "| stages | team | caught bugs | missed bugs | mixed | false alarms: refactorings | false alarms: intended "
        "| precision | recall | F1 | tokens/case (median) | TFLOP/case (median) | s/case (median) | no report |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (stages, agents, models), mine in groups(rows).items():
        scored = [r for r in mine if r.get(key) is not None]
        by = {
            k: [r[key] for r in scored if r["kind"] == k]
            for k in ("missed", "caught", "mixed", "refactor", "intended")
        }
        tp = sum(1 for r in scored if r["kind"] in BUGS and r[key])
        flagged_n = sum(1 for r in scored if r[key])
        bugs = [r[key] for r in scored if r["kind"] in BUGS]
        precision = (
            "-"
            if not flagged_n
            else f"{tp}/{flagged_n} [{wilson_ci(tp, flagged_n)[0]:.2f}, {wilson_ci(tp, flagged_n)[1]:.2f}]"
        )
        tokens = _median([r["tokens"] for r in scored if r.get("tokens") is not None])
        compute = _median([r["compute"] for r in scored if r.get("compute") is not None])
        secs = _median([r["seconds"] for r in scored if r.get("seconds") is not None])
        out.append(
            f"| {stages} | {team_label(agents, list(models))} | {rate(by['caught'])} | {rate(by['missed'])} "
            f"| {rate(by['mixed'])} | {rate(by['refactor'])} | {rate(by['intended'])} | {precision} | {rate(bugs)} "
            f"| {f1_text(scored, key)} | {'-' if tokens is None else f'{tokens:.0f}'} "
            f"| {'-' if compute is None else f'{compute / 1e12:.2f}'} | {'-' if secs is None else f'{secs:.1f}'} "
            f"| {len(mine) - len(scored)} |"
        )
    return "\n".join(out)


def lost_table(rows: list[dict[str, Any]]) -> str:
    """Per (stages, team) and kind of bug the public tests pass (``missed``, ``mixed``): the bugs not
    flagged, by the stage that lost them, each with its cases (HumanEval numbers)."""
    reasons = list(LOST)
    for r in rows:
        if r.get("lost") and r["lost"] not in reasons:
            reasons.append(r["lost"])
    out = ["| stages | team | bugs | not flagged | " + " | ".join(reasons) + " |",
           "|---|---|---|---|" + "---|" * len(reasons)]  # fmt: skip
    for (stages, agents, models), mine in groups(rows).items():
        for kind in ("missed", "mixed"):
            of = [r for r in mine if r["kind"] == kind and r.get("flagged") is not None]
            if not of:
                continue
            lost = [r for r in of if r["flagged"] is False]
            cells = []
            for reason in reasons:
                ids = [r["problem_id"].rsplit("/", 1)[-1] for r in lost if r.get("lost") == reason]
                cells.append(f"{len(ids)} ({', '.join(ids)})" if ids else "0")
            out.append(f"| {stages} | {team_label(agents, list(models))} | {kind} | {len(lost)}/{len(of)} | "
                       + " | ".join(cells) + " |")  # fmt: skip
    return "\n".join(out)


def time_table(rows: list[dict[str, Any]]) -> str:
    """Median seconds per stage and per case, where the reports record stage times."""
    names = sorted({n for r in rows for n in r.get("stage_seconds") or {}})
    if not names:
        return "(the reports record no per-stage times)"
    out = ["| stages | team | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for (stages, agents, models), mine in groups(rows).items():
        cells = []
        for n in names:
            m = _median([r["stage_seconds"][n] for r in mine if n in (r.get("stage_seconds") or {})])
            cells.append("-" if m is None else f"{m:.1f}")
        out.append(f"| {stages} | {team_label(agents, list(models))} | " + " | ".join(cells) + " |")
    return "\n".join(out)
