"""Which reading-review findings an execution reproduced, and merging them into it.

The rule: a reading finding is the problem an execution finding shows when both are in the **same
file**, of the **same kind** (an execution finding is a bug), and the reading finding's lines **touch a
line the change changed** where the execution finding points: its first or last line, or a changed line
of the diff between them (an added line, or for lines deleted with nothing added in their place the two
lines around the gap). For a difference those are the changed lines of the function (or program) the
input ran; lines between two changed ones that the change left alone do not count. A failing test or a
broken test run is matched only when the diff changed one place: one hunk of one file and nothing else
(no other file, whether deleted, renamed, copied, mode-only or otherwise without hunks; no rename or mode
change of that file), since a test does not say which of several changes broke it. Lines are not widened
and words are not compared: a reading finding next to the change, or on another place of it, stays a
finding of its own.

A matching reading finding (consensus or minority) is merged into the execution finding only when it is
**no more severe** than it: one finding, verified, keeping the execution's place, severity, kind,
message and counterexample (so its SARIF fingerprint does not change), with ``also_read`` saying which
agents raised it, where, what they said and what they suggested. A reading finding more severe than
every execution finding it matches is not merged: it stays its own finding, unverified, at its own
severity, since the execution showed a problem there, not one that bad (merged, it would be shown at
the execution's lower severity). A reading finding that several execution findings match joins the
first one with a counterexample, else the first failing test. Every execution finding stays; the
reading findings no execution matched stay as they were, unverified.

    merged = merge(executed, consensus, prepared.files)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from pydantic import BaseModel, Field

from memdoor.review.consensus import Consensus, Group
from memdoor.review.diff import FileDiff, Hunk
from memdoor.review.findings import AlsoRead, severity_rank


class Merged(BaseModel):
    """The findings to report once the reading review's findings are matched with the executions'."""

    findings: list[Group] = Field(
        description="Execution findings (in their order), then unmatched consensus."
    )
    minority: list[Group] = Field(description="Unmatched minority findings.")
    merged: int = Field(default=0, description="Reading findings merged into an execution finding.")


def hunk_lines(hunk: Hunk) -> set[int]:
    """New-file lines a hunk changed: its added lines, and for lines deleted with nothing added in their
    place the two lines around the gap."""
    out: set[int] = set()
    gap: int | None = None  # where the deleted lines not yet replaced sit
    for mark, n in hunk.numbered():
        if mark == "-":
            gap = n
            continue
        if mark == "+":
            out.add(n)
        elif gap is not None:
            out |= {max(1, n - 1), n}
        gap = None
    if gap is not None:
        out |= {max(1, gap - 1), gap}
    return out


def changed_by_file(files: Sequence[FileDiff]) -> dict[str, set[int]]:
    """The new-file lines each file still in the changed tree had changed (deleted files have none)."""
    return {f.path: set().union(*map(hunk_lines, f.hunks)) for f in files if not f.deleted}


def one_place(files: Sequence[FileDiff]) -> bool:
    """Whether the diff changed one hunk of one file and nothing else (see the module's rule)."""
    if len(files) != 1:
        return False
    (f,) = files
    moved = f.copied or (f.old_path is not None and f.old_path != f.path)
    mode = f.old_mode is not None and f.new_mode is not None and f.old_mode != f.new_mode
    return len(f.hunks) == 1 and not (f.deleted or moved or mode)


def same_problem(read: Group, shown: Group, *, one_place: bool, changed: Collection[int]) -> bool:
    """Whether the reading finding ``read`` is the problem the execution finding ``shown`` shows
    (``one_place``: the diff changed one hunk only; ``changed``: the diff's changed lines of
    ``shown.file``; see the module's rule)."""
    if shown.source == "agents" or read.file != shown.file or read.kind != shown.kind:
        return False
    if shown.source == "tests" and not one_place:
        return False
    points = {shown.line, shown.end_line} | {n for n in changed if shown.line <= n <= shown.end_line}
    return any(read.line <= n <= read.end_line for n in points)


def _target(read: Group, executed: Sequence[Group], one: bool, changed: Mapping[str, set[int]]) -> int | None:
    """The execution finding ``read`` joins: the first with a counterexample, else the first match that
    is at least as severe as ``read``."""
    lines = changed.get(read.file, set())
    matches = [
        i
        for i, g in enumerate(executed)
        if same_problem(read, g, one_place=one, changed=lines)
        and severity_rank(read.severity) <= severity_rank(g.severity)
    ]
    return min(matches, key=lambda i: (executed[i].counterexample is None, i)) if matches else None


def _note(read: Group, consensus: bool) -> AlsoRead:
    return AlsoRead(agents=list(read.agents), consensus=consensus, line=read.line, end_line=read.end_line,
                    severity=read.severity, message=read.message, suggestion=read.suggestion)  # fmt: skip


def merge(executed: Sequence[Group], consensus: Consensus, files: Sequence[FileDiff]) -> Merged:
    """The execution findings with the reading findings they reproduce merged in, and the reading
    findings left (consensus, minority) unverified as they were."""
    one, changed = one_place(files), changed_by_file(files)
    notes: dict[int, list[AlsoRead]] = {}
    kept: dict[bool, list[Group]] = {True: [], False: []}
    for agreed, groups in ((True, consensus.findings), (False, consensus.minority)):
        for g in groups:
            i = _target(g, executed, one, changed)
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
