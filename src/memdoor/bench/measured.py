"""What a committed full benchmark measured, in two lines, for the end of ``memdoor demo``.

Three demo problems cannot show a difference either way, so the demo closes with the figures of a full
run committed under ``benchmarks/results/`` — computed here from that run's portable files
(``run.json``: the rows and which is the baseline; ``results.jsonl``: one record per row and problem),
never typed in. Only problems every row finished count, so the rows stay paired.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

HEADLINE_RUN = Path("benchmarks") / "results" / "humaneval-matched"
"""The committed run the demo quotes: all 164 HumanEval problems, the mixed teams under today's sampling
rule, the 1.5B alone as baseline and the 1.5B given more compute (BENCHMARKS.md's rows S–V)."""


class RowFigure(BaseModel):
    """One row of a committed run, over the problems every row finished."""

    row: str = Field(description="The row's name, as the bench and report print it.")
    solved: int = Field(description="Problems whose answer passed the hidden tests.")
    compute: float = Field(description="FLOPs spent over those problems (≈ 2 × parameters × tokens).")


class Measured(BaseModel):
    """The figures the demo quotes from one committed run."""

    run: str = Field(description="The run directory, relative to the repository.")
    suite: str = Field(description="The suite the run used.")
    problems: int = Field(description="Problems every row finished.")
    baseline: RowFigure | None = Field(description="The run's baseline row (the bigger model alone).")
    best: RowFigure = Field(description="The row that solved the most (the cheaper one on a tie).")
    matched: RowFigure | None = Field(
        default=None,
        description="The baseline's model alone, given no more compute than ``best``: the row of that model "
        "only (any strategy, any draws) that solved the most at no more compute (None: none besides the "
        "baseline, or ``best`` is one of them).",
    )


def alone_rows(rows: list[str], baseline: str) -> list[str]:
    """The rows run by the baseline's model alone (``NAME@MODEL`` with the baseline's ``@MODEL``)."""
    _, at, model = baseline.partition("@")
    return [r for r in rows if at and r.endswith("@" + model)]


def find_run(start: Path, package_file: Path) -> Path | None:
    """The headline run directory: under ``start`` or one of its parents, else beside the package's
    checkout (an editable install); None when neither has it (an installed wheel)."""
    for base in (start.resolve(), *start.resolve().parents, *package_file.resolve().parents):
        candidate = base / HEADLINE_RUN
        if (candidate / "run.json").is_file() and (candidate / "results.jsonl").is_file():
            return candidate
    return None


def read_measured(run_dir: Path, relative_to: Path | None = None) -> Measured:
    """The headline figures of ``run_dir``; OSError / ValueError (json, KeyError) when its files are bad."""
    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    rows = [r["name"] for r in meta["config"]["rows"]]
    baseline = next((r["name"] for r in meta["config"]["rows"] if r.get("baseline")), None)
    solved: dict[str, dict[str, bool]] = {r: {} for r in rows}
    compute: dict[str, dict[str, float]] = {r: {} for r in rows}
    with (run_dir / "results.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("row") in solved and rec.get("status") == "done":
                solved[rec["row"]][rec["problem_id"]] = bool(rec.get("passed"))
                compute[rec["row"]][rec["problem_id"]] = float(rec.get("compute") or 0.0)
    common = set.intersection(*(set(v) for v in solved.values())) if rows else set()
    figures = {
        r: RowFigure(
            row=r,
            solved=sum(solved[r][p] for p in common),
            compute=sum(compute[r][p] for p in common),
        )
        for r in rows
    }
    best = max(figures.values(), key=lambda f: (f.solved, -f.compute))
    alone = alone_rows(rows, baseline) if baseline else []
    within = [figures[r] for r in alone if r != baseline and figures[r].compute <= best.compute]
    matched = None if best.row in alone or not within else max(within, key=lambda f: (f.solved, -f.compute))
    where = run_dir if relative_to is None else run_dir.relative_to(relative_to)
    return Measured(
        run=str(where),
        suite=str(meta["config"].get("suite", "")),
        problems=len(common),
        baseline=figures.get(baseline) if baseline else None,
        best=best,
        matched=matched,
    )


def describe(m: Measured) -> str:
    """Two lines: the best row against the baseline, with the compute ratio and where it comes from."""
    lines = [f"The full benchmark ({m.suite}, {m.problems} problems, committed in {m.run}):"]
    if m.baseline is None or m.baseline.compute <= 0:
        lines.append(f"  {m.best.row} solved {m.best.solved}/{m.problems}.")
    else:
        ratio = m.best.compute / m.baseline.compute
        lines.append(
            f"  {m.best.row} solved {m.best.solved}/{m.problems} against {m.baseline.row}'s "
            f"{m.baseline.solved}/{m.problems} (one draw), at {ratio:.2f}× its compute."
        )
        if m.matched is not None:
            lines.append(
                f"  Given up to that much compute, {m.baseline.row.partition('@')[2]} alone "
                f"({m.matched.row}) solved {m.matched.solved}/{m.problems}, at "
                f"{m.matched.compute / m.baseline.compute:.2f}× its compute."
            )
        lines.append("  Every row, and which team for which budget: BENCHMARKS.md.")
    return "\n".join(lines)
