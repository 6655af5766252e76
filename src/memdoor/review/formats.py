"""The review as JSON (for programs) and Markdown (for people). SARIF is in :mod:`memdoor.review.sarif`.

Each finding says plainly whether it is **verified** (an execution reproduced it: a test that passes on
the base and fails after the change, or an input whose old and new results differ, shown as its
counterexample) or **unverified** (the agents read it in the code; nothing ran it). A reading finding an
execution reproduced is no finding of its own: it is merged into that execution finding
(:mod:`memdoor.review.corroborate`), which says "also raised by the reading review" (``also_read``).

In Markdown, text from outside (messages that quote a program's output, test output, paths, the
suggested code, the patch) cannot add Markdown or HTML of its own: a line of it is escaped
(:func:`memdoor.review.mdescape.escape`), several lines are fenced so that they cannot close their
fence (:func:`memdoor.review.fence.fence`), a name is a code span (:func:`memdoor.review.mdescape.code`).
"""

from __future__ import annotations

from typing import Any

from memdoor.review.consensus import Group
from memdoor.review.fence import fence
from memdoor.review.mdescape import LINE_BREAK, code, escape
from memdoor.review.session import ReviewReport
from memdoor.review.testrun import TestRun

FINDING_FIELDS = (
    "file",
    "line",
    "end_line",
    "severity",
    "kind",
    "message",
    "suggestion",
    "agents",
    "confidence",
    "verified",
)
UNVERIFIED = "unverified: read by the agents, not run"


def finding_json(g: Group) -> dict[str, Any]:
    """A finding; ``verified`` says whether an execution reproduced it, ``source`` which stage showed it
    (agents, tests, differential), ``counterexample`` the input with its old and new results (or None),
    ``also_read`` the reading review's findings of the same problem merged into it."""
    example = g.counterexample.model_dump() if g.counterexample is not None else None
    also = [a.model_dump() for a in g.also_read]
    return {
        **{k: getattr(g, k) for k in FINDING_FIELDS},
        "source": g.source,
        "counterexample": example,
        "also_read": also,
    }


def tests_json(run: TestRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    out = run.model_dump(
        include={"command", "passed", "output", "exit_code", "timed_out", "memory_exceeded", "seconds"}
    )
    return {
        **out,
        "runner": run.results.runner,
        "failed": [f.name for f in run.results.failed],
        "sees": run.sees,
        "hidden": run.hidden,
    }


def ledger_json(report: ReviewReport) -> dict[str, Any]:
    t = report.ledger.totals()
    out = t.model_dump(
        include={"calls", "failed_calls", "prompt_tokens", "completion_tokens", "usd", "compute"}
    )
    return {**out, "wall_seconds": round(t.wall_seconds, 3)}


def to_json(report: ReviewReport) -> dict[str, Any]:
    """``{"findings", "minority", "patch", "ledger", ...}`` as issue 15 names them, plus what was skipped,
    the unusable answers, the test command's result on the changed code, the stages that ran, the
    differential stage's record (functions, differences, each function's ``outcome``, seconds), the reading
    review's seconds and the behaviour the change was observed to have as its description asked, the trace id and the config."""
    patch = None
    if report.patch is not None:
        patch = {
            "diff": report.patch.diff,
            "tests": tests_json(report.patch.tests),
            "left_out": report.patch.left_out,
        }
    return {
        "complete": report.complete,
        "incomplete_reason": report.incomplete_reason,
        "findings": [finding_json(g) for g in report.findings],
        "minority": [finding_json(g) for g in report.minority],
        "patch": patch,
        "tests": tests_json(report.tests),
        "base_tests": tests_json(report.base_tests),
        "pre_existing": [f.model_dump() for f in report.pre_existing],
        "agents": report.agents,
        "quorum": report.quorum,
        "files": report.files,
        "skipped": [s.model_dump() for s in report.skipped],
        "unusable": [u.model_dump() for u in report.unusable],
        "dropped": report.dropped,
        "stopped": report.stopped,
        "error": report.error,
        "stages_run": report.stages_run,
        "reading_seconds": report.reading_seconds,
        "nothing_to_review": report.nothing_to_review,
        "differential": None if report.differential is None else report.differential.model_dump(mode="json"),
        "observed_behaviour": [d.model_dump(mode="json") for d in report.observed_behaviour],
        "ledger": ledger_json(report),
        "trace_id": report.trace_id,
        "config": report.config.shown(),
    }


def _test_line(run: TestRun) -> str:
    return f"{code(run.command)} **{run.outcome}** ({run.seconds:.1f} s)"


def _shown_by(g: Group, quorum_of: str) -> str:
    conf = "" if g.confidence is None else f", confidence {g.confidence:.2f}"
    agreed = f"agreed by {len(g.agents)} of {quorum_of}: {', '.join(g.agents)}{conf}"
    if g.source == "differential":
        return "  shown by running an input on the base and on the change" + (
            f"; {agreed}" if g.agents else ""
        )
    if g.source == "tests":
        return "  shown by the tests (base passes, the change fails)"
    return f"  {agreed}"


def also_read_md(g: Group, quorum_of: str) -> list[str]:
    """One line per reading-review finding merged into ``g``: who raised it, where, what (first line);
    its suggestion, when it had one, fenced under it."""
    out = []
    for a in g.also_read:
        where = f"{g.file}:{a.line}" + (f"-{a.end_line}" if a.end_line != a.line else "")
        who = f"{len(a.agents)} of {quorum_of}" + ("" if a.consensus else ", a minority")
        said = escape(LINE_BREAK.split(a.message, maxsplit=1)[0])
        out.append(
            f"  also raised by the reading review ({who}: {', '.join(a.agents)}) at {code(where)}: {said}"
        )
        if a.suggestion is not None:
            out += ["  suggested by the reading review:", *fenced_md(a.suggestion.rstrip("\n"), indent="  ")]
    return out


def fenced_md(text: str, info: str = "", indent: str = "") -> list[str]:
    """``text`` in a fence it cannot close, each line (a carriage return ends one too) indented by
    ``indent`` (under a list item: a line left unindented would end the item, and the fence with it)."""
    return [f"{indent}{line}" if line else "" for line in LINE_BREAK.split(fence(text, info))]


def example_md(g: Group) -> list[str]:
    """The counterexample as a fenced block, indented under its finding."""
    c = g.counterexample
    if c is None:
        return []
    return fenced_md(f"call:   {c.function}({c.input})\nbase:   {c.old}\nchange: {c.new}", indent="  ")


def _finding_md(g: Group, quorum_of: str) -> list[str]:
    """The finding: its message's first line escaped on the item's line, the rest of it (a test's
    failure text) fenced under it, the counterexample and the suggestion fenced."""
    where = f"{g.file}:{g.line}" + (f"-{g.end_line}" if g.end_line != g.line else "")
    mark = "verified" if g.verified else UNVERIFIED
    head, *rest = LINE_BREAK.split(g.message, maxsplit=1)
    lines = [
        f"- **{g.severity} {g.kind}** ({mark}) {code(where)} — {escape(head)}",
        _shown_by(g, quorum_of),
        *also_read_md(g, quorum_of),
    ]
    if rest and rest[0].strip():
        lines += fenced_md(rest[0].rstrip(), indent="  ")
    lines += example_md(g)
    if g.suggestion is not None:
        lines += ["  suggested:", *fenced_md(g.suggestion.rstrip("\n"), indent="  ")]
    return lines


def _output_block(run: TestRun) -> list[str]:
    tail = run.output.strip()
    return ["", *fenced_md(tail[-3000:])] if tail else []


def _from_tests(report: ReviewReport) -> str:
    shown = sum(1 for g in report.findings if g.verified)
    return f" ({shown} verified by execution)" if shown else ""


def _tests_md(report: ReviewReport) -> list[str]:
    out = []
    if report.base_tests is not None:
        out += ["", f"Tests on the base: {_test_line(report.base_tests)}"]
        if not report.complete and report.tests is None:
            out += _output_block(report.base_tests)
    if report.tests is not None:
        out += ["", f"Tests on the changed code: {_test_line(report.tests)}"]
    if report.pre_existing:
        out += ["", "Failing on the base already (not blamed on the change):"]
        out += [f"- {code(f.name)}" for f in report.pre_existing]
    run = report.base_tests or report.tests
    if run is not None and run.hidden:
        out += ["", "Not visible to the tests:", *(f"- {escape(h)}" for h in run.hidden)]
    return out


def _counts_md(report: ReviewReport) -> str:
    """What verified means, and which findings the exit code counts (--fail-on)."""
    c = report.config
    counted = "every finding" if c.fail_on_unverified else "verified findings only"
    bar = "no finding (--fail-on never)" if c.fail_on == "never" else f"{counted}, {c.fail_on} or worse"
    return (
        "Verified: an execution reproduced it (a failing test, or an input whose old and new results "
        f"differ); unverified: the agents read it in the code. The exit code counts {bar}."
    )


def to_markdown(report: ReviewReport) -> str:
    n = str(report.agents)
    why = escape(report.incomplete_reason or "")
    first = [] if report.complete else [f"**Review not completed:** {why}", ""]
    if report.nothing_to_review is not None:
        first += [f"**Nothing to review:** {escape(report.nothing_to_review)}", ""]
    out = [
        *first,
        f"# Review: {len(report.findings)} consensus finding(s){_from_tests(report)}, "
        f"{len(report.minority)} minority",
        "",
        f"{report.agents} agent(s); a finding is reported when at least {report.quorum} raised it. "
        f"Files: {', '.join(code(f) for f in report.files) or '-'}.",
        "",
        _counts_md(report),
    ]
    out += _tests_md(report)
    out += ["", "## Consensus findings", ""]
    out += [line for g in report.findings for line in _finding_md(g, n)] or ["None."]
    if report.minority:
        out += ["", "## Minority findings (ranked by support, then confidence)", ""]
        out += [line for g in report.minority for line in _finding_md(g, n)]
    out += ["", "## Patch", ""]
    p = report.patch
    if p is None or not p.diff:
        out.append("No patch: no consensus finding came with a suggested change that applies.")
    else:
        if p.tests is None:
            out.append("Not tested (no --test command given): it is a suggestion, not a fix.")
        else:
            out.append(f"Tests with the patch: {_test_line(p.tests)}")
        out += ["", *fenced_md(p.diff.rstrip("\n"), "diff")]
        if p.tests is not None and not p.tests.passed:
            out += _output_block(p.tests)
    if p is not None and p.left_out:
        out += ["", "Left out of the patch:", *(f"- {escape(why)}" for why in p.left_out)]
    notes = [f"- skipped {code(s.file)}: {escape(s.reason)}" for s in report.skipped]
    notes += [
        f"- ignored the answer of {escape(u.agent)} on {code(u.file)}: {escape(u.error)}"
        for u in report.unusable
    ]
    if report.dropped:
        notes.append(f"- {report.dropped} finding(s) dropped for not fitting the schema")
    if report.stopped != "done":
        notes.append(f"- stopped: {report.stopped}")
    if report.error:
        notes.append(f"- error: {escape(report.error)}")
    if notes:
        out += ["", "## Notes", "", *notes]
    t = report.ledger.totals()
    usd = "unpriced" if t.usd is None else f"${t.usd:.4f}"
    compute = "" if t.compute is None else f"{t.compute / 1e12:.2f} TFLOP, "
    out += [
        "",
        f"Cost: {t.calls} calls, {t.prompt_tokens} prompt + {t.completion_tokens} completion tokens, "
        f"{compute}{t.wall_seconds:.1f} s, {usd}."
        + (f" Trace: `memdoor trace {report.trace_id}`" if report.trace_id else ""),
    ]
    return "\n".join(out) + "\n"
