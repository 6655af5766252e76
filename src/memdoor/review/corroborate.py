"""Which reading-review findings an execution reproduced, and merging them into it.

The rule: a reading finding is the problem an execution finding shows when both are in the **same
file**, of the **same kind** (an execution finding is a bug), and the reading finding's lines **overlap
the execution finding's changed lines** — for a difference, the changed lines of the function the input
ran (first to last); for a failing test or a broken test run, the changed lines, and only when the diff
changed one place (one hunk), since a test does not say which of several places broke it. Lines are not
widened and words are not compared: a reading finding next to the change, or on another place of it,
stays a finding of its own.

A matching reading finding (consensus or minority) is merged into the execution finding: one finding,
verified, keeping the execution's place, severity, kind, message and counterexample (so its SARIF
fingerprint does not change), with ``also_read`` saying which agents raised it, where, and what they
said. A reading finding that several execution findings match joins the first one with a
counterexample, else the first failing test. Every execution finding stays; the reading findings no
execution matched stay as they were, unverified.

    merged = merge(executed, consensus, prepared.files)
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from memdoor.review.consensus import Consensus, Group
from memdoor.review.diff import FileDiff
from memdoor.review.findings import AlsoRead
from memdoor.review.teststage import changed_lines


class Merged(BaseModel):
    """The findings to report once the reading review's findings are matched with the executions'."""

    findings: list[Group] = Field(
        description="Execution findings (in their order), then unmatched consensus."
    )
    minority: list[Group] = Field(description="Unmatched minority findings.")
    merged: int = Field(default=0, description="Reading findings merged into an execution finding.")


def same_problem(read: Group, shown: Group, *, one_place: bool) -> bool:
    """Whether the reading finding ``read`` is the problem the execution finding ``shown`` shows
    (``one_place``: the diff changed one hunk only; see the module's rule)."""
    if shown.source == "agents" or read.file != shown.file or read.kind != shown.kind:
        return False
    if shown.source == "tests" and not one_place:
        return False
    return read.line <= shown.end_line and shown.line <= read.end_line


def _target(read: Group, executed: Sequence[Group], one_place: bool) -> int | None:
    """The execution finding ``read`` joins: the first with a counterexample, else the first match."""
    matches = [i for i, g in enumerate(executed) if same_problem(read, g, one_place=one_place)]
    return min(matches, key=lambda i: (executed[i].counterexample is None, i)) if matches else None


def _note(read: Group, consensus: bool) -> AlsoRead:
    return AlsoRead(agents=list(read.agents), consensus=consensus, line=read.line, end_line=read.end_line,
                    severity=read.severity, message=read.message)  # fmt: skip


def merge(executed: Sequence[Group], consensus: Consensus, files: Sequence[FileDiff]) -> Merged:
    """The execution findings with the reading findings they reproduce merged in, and the reading
    findings left (consensus, minority) unverified as they were."""
    one_place = len(changed_lines(list(files))) == 1
    notes: dict[int, list[AlsoRead]] = {}
    kept: dict[bool, list[Group]] = {True: [], False: []}
    for agreed, groups in ((True, consensus.findings), (False, consensus.minority)):
        for g in groups:
            i = _target(g, executed, one_place)
            if i is None:
                kept[agreed].append(g)
            else:
                notes.setdefault(i, []).append(_note(g, agreed))
    shown = [
        g.model_copy(update={"also_read": [*g.also_read, *notes[i]]}) if i in notes else g
        for i, g in enumerate(executed)
    ]
    merged = sum(len(n) for n in notes.values())
    return Merged(findings=shown + kept[True], minority=kept[False], merged=merged)
