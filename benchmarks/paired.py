"""Figures the tables do not print, read from committed runs: no model runs, no database.

    # wins / losses of row A against row B on the problems both have, and the exact two-sided McNemar p
    .venv/bin/python benchmarks/paired.py pair humaneval-ranked 'cascade:5@…' humaneval-v2 adaptive:5
    # how many answers two rows share, word for word (did a later sitting repeat its draws?)
    .venv/bin/python benchmarks/paired.py same humaneval-ranked single@local:qwen2.5-coder-1.5b \
        humaneval-published single@local:qwen2.5-coder-1.5b
    # problems where a row spent more than a budget, and those its budget stopped
    .venv/bin/python benchmarks/paired.py over humaneval-rewrite shared:5 1.2e13

A run is a directory under benchmarks/results/ (or any path); a row is its exact name in results.jsonl.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memdoor.bench.stats import mcnemar_exact

RESULTS = Path(__file__).resolve().parent / "results"


class RowNotFound(Exception):
    """The run has no result of that row."""


def load(run: str, row: str) -> dict[str, dict[str, Any]]:
    """The row's results by problem. ``run`` is a directory under benchmarks/results/ or a path."""
    path = Path(run) if Path(run).is_dir() else RESULTS / run
    file = path / "results.jsonl"
    if not file.is_file():
        raise RowNotFound(f"no results.jsonl in {path}")
    rows = {}
    with file.open() as f:
        for line in f:
            r = json.loads(line)
            if r["row"] == row:
                rows[r["problem_id"]] = r
    if not rows:
        raise RowNotFound(f"{path.name} has no row {row!r}")
    return rows


def pair(a: dict[str, dict], b: dict[str, dict]) -> str:
    common = sorted(a.keys() & b.keys())
    wins = sum(a[p]["passed"] and not b[p]["passed"] for p in common)
    losses = sum(b[p]["passed"] and not a[p]["passed"] for p in common)
    solved_a, solved_b = (sum(x[p]["passed"] for p in common) for x in (a, b))
    p = mcnemar_exact(wins, losses)
    return (f"{len(common)} problems in both: A solved {solved_a}, B {solved_b}; "
            f"A alone {wins}, B alone {losses} (wins / losses {wins} / {losses}), exact McNemar p = {p:.2g}")  # fmt: skip


def same(a: dict[str, dict], b: dict[str, dict]) -> str:
    common = sorted(a.keys() & b.keys())
    equal = [p for p in common if a[p].get("code") == b[p].get("code")]
    differ = [p for p in common if p not in equal]
    newly = sum(b[p]["passed"] and not a[p]["passed"] for p in differ)
    lost = sum(a[p]["passed"] and not b[p]["passed"] for p in differ)
    return (f"{len(common)} problems in both: {len(equal)} answers the same, {len(differ)} differ; "
            f"of those, B passes where A fails on {newly}, the reverse on {lost}")  # fmt: skip


def over(rows: dict[str, dict], budget: float) -> str:
    spent = {p: r["compute"] for p, r in rows.items()}
    above = [p for p, c in spent.items() if c > budget]
    stopped = [p for p, r in rows.items() if r.get("stopped") == "budget"]
    most = max(spent.values()) / budget
    return (f"{len(rows)} problems: spent more than {budget:.2g} FLOPs on {len(above)} (at most {most:.2f}×); "
            f"stopped by the budget on {len(stopped)}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("pair", "same"):
        p = sub.add_parser(name)
        p.add_argument("run_a")
        p.add_argument("row_a")
        p.add_argument("run_b")
        p.add_argument("row_b")
    p = sub.add_parser("over")
    p.add_argument("run")
    p.add_argument("row")
    p.add_argument("budget", type=float)
    args = parser.parse_args(argv)
    try:
        if args.command == "over":
            print(over(load(args.run, args.row), args.budget))
        else:
            a, b = load(args.run_a, args.row_a), load(args.run_b, args.row_b)
            print((pair if args.command == "pair" else same)(a, b))
    except (RowNotFound, json.JSONDecodeError, KeyError) as e:
        print(f"paired.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
