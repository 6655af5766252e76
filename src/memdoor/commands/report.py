"""Statistics, charts and comparisons of a bench results directory.

A committed run (its portable files run.json, results.jsonl and calls.jsonl, without the database) is
reported too: its database is first rebuilt from those files and its suite, with no model run.

Writes DIR/report.md, DIR/report.html and PNG charts into DIR (works on an unfinished run too,
covering the results stored so far). With --json, also prints the summary as JSON:
{"strategies": {NAME: {"solved", "total", "pass_at_1", "ci95": [lo, hi], "tokens_per_problem",
"seconds_per_problem", "usd_per_problem", "compute_per_problem", "team", and for parallel rows
"scaling": {"k": {"vote", "logprob", "public", "oracle"}}, ...}}, "pairs": [...],
"run": {"calls_made", "calls_charged", ...}, "breakdowns": {BY: {GROUP: {NAME: {"solved", "total",
"oracle"}}}}, "compute_matched": {"frontier", "comparisons", "better", "worse", ...}, "serving": {...},
...}. Every row (but the bigger model's own) is compared with the best single-model row (one model, any
strategy and number of draws) at no more compute, with the paired test (exact McNemar, Holm-corrected),
and that frontier is drawn on the cost–accuracy chart. --serving prices the rows on a serving setup you
describe (docs/benchmarks.md). --axis chooses the cost axis of the cost–accuracy
chart and front (default compute; tokens when some model's size is unknown); --usd-per-gpu-hour adds
rented-hardware dollars per problem ($/GPU-hour × seconds per problem). The report also fits the
estimate of an answer being correct on the run and says how well it did on problems it was not fitted
on; --calibration-out FILE keeps that fit. --rows keeps only the rows named: an unfinished run compares
its rows on the problems all of them finished, so a row added to a run later can be left out until it
has caught up.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memdoor.bench.analysis import AXES, analyse
from memdoor.bench.rebuild import rebuild, rebuildable
from memdoor.bench.report import write_report
from memdoor.bench.serving import EXAMPLE, parse_setup
from memdoor.bench.stats import RESAMPLES
from memdoor.bench.store import ResultsStore
from memdoor.commands.options import FloatRange, at_least
from memdoor.core.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", help="a memdoor bench --out directory")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    parser.add_argument(
        "--resamples",
        type=at_least(100, 1_000_000),
        default=RESAMPLES,
        help=f"bootstrap resamples, at least 100 (default {RESAMPLES:,})",
    )
    parser.add_argument(
        "--axis",
        choices=AXES,
        default="compute",
        help="cost axis of the cost–accuracy chart and front (default compute)",
    )
    parser.add_argument(
        "--calibration-out",
        metavar="FILE",
        help="write the estimate of an answer being correct fitted on this run (JSON; memdoor ships one as "
        "memdoor/data/calibration.json)",
    )
    parser.add_argument(
        "--rows",
        metavar="LIST",
        help="only these rows, comma-separated (e.g. leave out a row added to the run that has not caught up)",
    )
    parser.add_argument(
        "--serving",
        metavar="SETUP",
        help="dollars and latency per problem on a serving setup: KEY=VALUE,... or a YAML file with keys gpus, "
        "gpu_hour_usd, tokens_per_s (the engine's measured tokens per second in all), streams (concurrent "
        "requests it was measured at), optional model (whose tokens_per_s; default the run's biggest) and "
        f"utilization (0-1, default 1); e.g. {EXAMPLE} (see docs/benchmarks.md)",
    )
    parser.add_argument(
        "--usd-per-gpu-hour",
        type=FloatRange(0.0, 1e6),
        metavar="USD",
        help="rented hardware price: adds $/problem = USD × seconds per problem / 3600",
    )


def run(args: argparse.Namespace) -> int:
    serving = parse_setup(args.serving) if args.serving else None  # bad input: refused before any work
    directory = Path(args.directory)
    if rebuildable(directory):  # a committed run on a fresh checkout: its database from its portable files
        rebuild(directory)
        if not args.json:
            print(f"rebuilt {ResultsStore.db_path(directory)} from the run's portable files")
    store = ResultsStore.open(directory)
    try:
        only = [n.strip() for n in args.rows.split(",") if n.strip()] if args.rows else None
        analysis = analyse(
            store,
            resamples=args.resamples,
            axis=args.axis,
            usd_per_gpu_hour=args.usd_per_gpu_hour,
            only_rows=only,
            serving=serving,
        )
    finally:
        store.close()
    paths = write_report(analysis, store.directory)
    if args.calibration_out:
        if analysis.calibration is None:
            raise UsageError(f"{args.directory}: too few finished results with signals to fit a calibration")
        out = Path(args.calibration_out)
        out.write_text(analysis.calibration.model_dump_json(indent=1) + "\n", encoding="utf-8")
        paths.append(out)
    if args.json:
        print(json.dumps(analysis.summary(), indent=2))
    else:
        for r in analysis.rows:
            lo, hi = r.ci95
            band = "" if lo is None else f" [{100 * lo:.1f}, {100 * hi:.1f}]"
            rate = "–" if r.pass_at_1 is None else f"{100 * r.pass_at_1:.1f}%"
            print(f"{r.name:<40} {r.solved:>5}/{r.total:<5} {rate}{band}")
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0
