"""A report's tables of counts: solved / total per group of problems (difficulty, platform, release month,
language, public tests) and row, and each problem's result in every row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.bench.config import RowSpec
from memdoor.bench.records import ProblemInfo, ResultRecord


class GroupCounts(BaseModel):
    """One row's counts in one group of problems."""

    solved: int = 0
    total: int = 0
    oracle: int | None = Field(
        default=None,
        description="Problems where some candidate passed (the selection ceiling); None: unknown.",
    )

    @property
    def rate(self) -> float | None:
        return self.solved / self.total if self.total else None


class Breakdown(BaseModel):
    """Solved / total per group of problems (a difficulty, a platform, a release month) and row."""

    by: str = Field(description="difficulty, platform or release month.")
    groups: list[str] = Field(description="Group values, in display order.")
    cells: dict[str, dict[str, GroupCounts]] = Field(description="group → row → counts.")


class ProblemCell(BaseModel):
    """One row's result on one problem, as the report's problem table shows it."""

    passed: bool = Field(description="The chosen code passed every test.")
    status: str = Field(description="done or error.")
    trace: str | None = Field(default=None, description="The trace file, relative to the results directory.")


class ProblemRow(BaseModel):
    """Every row's result on one problem."""

    id: str
    difficulty: str | None = None
    cells: dict[str, ProblemCell] = Field(description="Row name → its result (rows without one left out).")


def breakdown(
    by: str,
    key: Callable[[ProblemInfo], str | None],
    problems: Sequence[ProblemInfo],
    rows: Sequence[RowSpec],
    results: Sequence[ResultRecord],
) -> Breakdown | None:
    """The counts per group ``key`` puts each problem in (None: no problem has a group)."""
    group_of = {p.id: key(p) for p in problems}
    if all(v is None for v in group_of.values()):
        return None
    order = {"easy": 0, "medium": 1, "hard": 2}
    groups = sorted({v or "unknown" for v in group_of.values()}, key=lambda g: (order.get(g, 9), g))
    cells = {g: {r.name: GroupCounts() for r in rows} for g in groups}
    known: set[str] = set()  # rows whose candidates the run graded (as for the row's own oracle_solved)
    for res in results:
        if res.problem_id not in group_of or res.row not in cells[groups[0]]:
            continue
        cell = cells[group_of[res.problem_id] or "unknown"][res.row]
        cell.total += 1
        cell.solved += res.passed
        cell.oracle = (cell.oracle or 0) + (bool(res.oracle) or res.passed)
        if res.oracle is not None:
            known.add(res.row)
    for row_cells in cells.values():
        for name, cell in row_cells.items():
            cell.oracle = cell.oracle if name in known else None
    return Breakdown(by=by, groups=groups, cells=cells)


def breakdowns(
    problems: Sequence[ProblemInfo], rows: Sequence[RowSpec], results: Sequence[ResultRecord]
) -> list[Breakdown]:
    """The breakdowns a report shows: difficulty, platform and release month where known, language and
    public tests where the problems differ in them."""
    found = (
        breakdown("difficulty", lambda p: p.difficulty, problems, rows, results),
        breakdown("platform", lambda p: p.platform, problems, rows, results),
        breakdown("release month", lambda p: p.release_month, problems, rows, results),
        breakdown("language", lambda p: p.language, problems, rows, results)
        if len({p.language for p in problems}) > 1
        else None,
        breakdown("public tests", lambda p: p.examples, problems, rows, results)
        if len({p.examples for p in problems}) > 1
        else None,
    )
    return [b for b in found if b is not None]


def per_problem(
    problems: Sequence[ProblemInfo], results: Sequence[ResultRecord], directory: Path
) -> list[ProblemRow]:
    """Each problem's results; a trace is named only when its file is there (a run rebuilt from its
    portable files on another machine has none), so the report never links to a missing page."""
    rows = {p.id: ProblemRow(id=p.id, difficulty=p.difficulty, cells={}) for p in problems}
    for r in results:
        if r.problem_id in rows:
            trace = r.trace_path if r.trace_path and (directory / r.trace_path).is_file() else None
            rows[r.problem_id].cells[r.row] = ProblemCell(passed=r.passed, status=r.status, trace=trace)
    return [row for row in rows.values() if row.cells]
