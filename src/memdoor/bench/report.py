"""The bench report: ``report.md`` and ``report.html`` (same content) plus PNG charts, in the results
directory."""

from __future__ import annotations

import json
from pathlib import Path

from memdoor.bench.analysis import AXIS_LABELS, Analysis
from memdoor.bench.breakdown import Breakdown, GroupCounts
from memdoor.bench.charts import CALIBRATION_PNG, PARETO_PNG, PASS_PNG, chart_name, write_charts
from memdoor.bench.compare import Conclusion
from memdoor.bench.document import Block, Cell, Code, Heading, Image, Link, Para, Table, to_html, to_markdown
from memdoor.bench.formatting import ci, num, pct, pvalue
from memdoor.bench.rowstats import ALPHA, PairStats, RowStats, TeamVsSingle
from memdoor.bench.sections import matched_section, serving_section
from memdoor.run.live import render_record
from memdoor.run.tracestore import TraceRecord
from memdoor.select.calibration import Calibration

REPORT_MD = "report.md"
REPORT_HTML = "report.html"


def _languages(counts: dict[str, int]) -> str:
    """``Python`` or ``JavaScript (164), Rust (20)``."""
    names = {"python": "Python", "javascript": "JavaScript", "rust": "Rust"}
    if len(counts) <= 1:
        return names.get(next(iter(counts), "python"), next(iter(counts), "python"))
    return ", ".join(f"{names.get(k, k)} ({n})" for k, n in sorted(counts.items()))


def usd(r: RowStats) -> str:
    if r.usd is None:
        return "unpriced"
    return f"${r.usd.mean:.4f} / ${r.usd.median:.4f} / ${r.usd.p95:.4f}"


def _pair_sentence(p: PairStats) -> str:
    if p.problems == 0:
        return f"{p.a} vs {p.b}: no problem with results for both."
    diff = 100 * (p.diff or 0.0)
    if p.wins == p.losses:
        verdict = "no difference"
    elif p.p_value < ALPHA:
        verdict = f"{p.a if p.wins > p.losses else p.b} is better (significant at {ALPHA:.0%})"
    else:
        verdict = f"{p.a if p.wins > p.losses else p.b} is ahead, but not significantly (p ≥ {ALPHA:.0%})"
    return (
        f"{p.a} vs {p.b} on {p.problems} problems: {diff:+.1f} points {ci(p.diff_ci95, True)}, "
        f"{p.wins} wins / {p.losses} losses, McNemar p = {pvalue(p.p_value)} — {verdict}."
    )


def _verdict_sentence(v: Conclusion, vs: list[TeamVsSingle]) -> str:
    """The plain answer against one baseline: who beats it (Holm-corrected), the cheapest, who matches it
    for less."""
    of = {t.team: t for t in vs if t.baseline == v.baseline}

    def cost(team: str) -> str:
        t = of[team]
        kind = "compute" if t.compute_ratio is not None else "tokens"
        return f"{team} ({num(t.ratio(), 2)}× {kind}, {num(t.seconds_ratio, 2)}× seconds)"

    head = (
        f"**Against {v.baseline}** ({v.comparisons} teams compared, p-values corrected with Holm's method): "
    )
    if v.better:
        text = f"better: {', '.join(cost(t) for t in v.better)}; the cheapest is {v.cheapest_better}."
    else:
        text = "no team is significantly better once every comparison is counted"
        if v.better_uncorrected:
            text += f" (before the correction, p < {ALPHA:.0%}: {', '.join(cost(t) for t in v.better_uncorrected)})"
        text += "."
    if v.as_good_for_less:
        text += (
            f" At least as many problems solved for less: {', '.join(cost(t) for t in v.as_good_for_less)}."
        )
    else:
        text += " No team solves as many problems for less."
    return head + text


def build(analysis: Analysis) -> list[Block]:
    """The report's blocks, in order."""
    cfg = analysis.run.config
    blocks: list[Block] = [Heading(1, "Memdoor bench report")]
    expected = analysis.problems_total * len(analysis.rows)
    if analysis.complete:
        scope = "."
    elif analysis.problems_compared:
        n = analysis.problems_compared
        left_out = analysis.results_stored - n * len(analysis.rows)
        scope = f" (INCOMPLETE: every number below covers the {n} problems with a result in every row" + (
            f"; {left_out} results of unfinished problems are left out)." if left_out else ")."
        )
    else:
        scope = " (INCOMPLETE: no problem has a result in every row yet; numbers cover the stored results)."
    blocks.append(
        Para(
            f"Suite: {cfg.suite} — {analysis.problems_total} problems × {len(analysis.rows)} rows; "
            f"{analysis.results_stored} of {expected} results stored"
            + scope
            + f" Answers in {_languages(analysis.languages)}."
            + f" Seed {cfg.seed}; max {cfg.max_tokens} completion tokens per call. "
            f"One sample per problem and row, so pass@1 = solved / total; a run that raised counts as failed."
        )
    )
    if analysis.public_only:
        blocks.append(
            Para(
                f"Caution: {analysis.public_only} of {analysis.problems_total} problems have no hidden tests; "
                "they were graded on their public tests, which the agents saw and ran, so pass@1 on them "
                "overstates what a full test suite would give."
            )
        )
    if cfg.budget_tokens is not None:
        stops = ", ".join(f"{r.name} {r.budget_stops}" for r in analysis.rows)
        blocks.append(
            Para(
                f"Equal budget: every row had the same budget of {cfg.budget_tokens:,} tokens "
                f"(prompt + completion) per problem. Problems where the budget ran out: {stops}."
            )
        )
    else:
        blocks.append(
            Para(
                "No token budget was set (--budget-tokens): each row spent what its strategy needed, so "
                "compare accuracy together with the cost columns below."
            )
        )

    blocks += [Heading(2, "pass@1"), _pass_table(analysis), Image(PASS_PNG, "pass@1 per row")]
    blocks.append(
        Para(
            "95% intervals of pass@1: Wilson score; of differences between rows (below): percentile "
            f"bootstrap over problems, pairs kept, {analysis.resamples:,} resamples, seed {analysis.seed}. "
            "Oracle ceiling: problems where some candidate the team produced passed "
            "every test (a perfect selector's score)."
        )
    )

    matched = analysis.compute_matched
    if matched is not None:  # the verdict that lets the bigger model spend the team's compute comes first
        blocks += matched_section(matched)
        blocks.append(Heading(2, "Team vs the baseline row alone"))
        blocks.append(
            Para(
                "Each team against the baseline row as it is (usually one draw of the bigger model), whatever "
                "either spends; the section above gives the bigger model the team's compute."
            )
        )
    else:
        blocks.append(Heading(2, "Team vs bigger single model"))
    if analysis.team_vs_single:
        blocks.append(
            Table(
                [
                    "team",
                    "baseline",
                    "team pass@1",
                    "baseline pass@1",
                    "difference (points) [95% CI]",
                    "wins / losses",
                    "McNemar p",
                    "Holm p",
                    "tokens ×",
                    "compute ×",
                    "seconds ×",
                ],
                [
                    [
                        t.team,
                        t.baseline,
                        pct(t.pair.a_solved / t.pair.problems if t.pair.problems else None),
                        pct(t.pair.b_solved / t.pair.problems if t.pair.problems else None),
                        f"{100 * (t.pair.diff or 0):+.1f} {ci(t.pair.diff_ci95, True)}",
                        f"{t.pair.wins} / {t.pair.losses}",
                        pvalue(t.pair.p_value),
                        pvalue(t.holm_p),
                        num(t.token_ratio, 2),
                        num(t.compute_ratio, 2),
                        num(t.seconds_ratio, 2),
                    ]
                    for t in analysis.team_vs_single
                ],
            )
        )
        blocks += [Para(_verdict_sentence(v, analysis.team_vs_single)) for v in analysis.verdicts]
        blocks += [Para(_pair_sentence(t.pair)) for t in analysis.team_vs_single]
    else:
        blocks.append(Para("No baseline row in this run (add one with --baseline STRATEGY@MODEL)."))

    blocks.append(Heading(2, "Paired comparisons"))
    if analysis.pairs:
        blocks.append(
            Table(
                [
                    "a",
                    "b",
                    "problems",
                    "a solved",
                    "b solved",
                    "wins",
                    "losses",
                    "diff [95% CI]",
                    "McNemar p",
                ],
                [
                    [
                        p.a,
                        p.b,
                        str(p.problems),
                        str(p.a_solved),
                        str(p.b_solved),
                        str(p.wins),
                        str(p.losses),
                        f"{100 * (p.diff or 0):+.1f} {ci(p.diff_ci95, True)}",
                        pvalue(p.p_value),
                    ]
                    for p in analysis.pairs
                ],
            )
        )
        blocks += [Para(_pair_sentence(p)) for p in analysis.pairs]
        blocks.append(
            Para(
                "Wins: problems a solved and b did not; losses the reverse. The exact two-sided McNemar test "
                "uses only these discordant problems (binomial, p = 1/2). No correction for multiple comparisons."
            )
        )
    else:
        blocks.append(Para("Only one row: nothing to compare."))

    blocks += [Heading(2, "Cost per problem"), _cost_table(analysis)]
    blocks.append(
        Para(
            "Tokens are prompt + completion over every call; seconds are the wall time of each run as the "
            "runner's ledger records it (the team's work, from the first call to the answer; the final "
            "grading on the hidden tests is not counted; with --concurrency above 1, runs share the machine "
            "and each takes longer). Dollars come "
            "from the price table; 'unpriced' when some model has no price (local models)."
        )
    )

    blocks.append(Para(_computed(analysis)))
    if analysis.serving is not None:
        blocks += serving_section(analysis.serving)
    blocks += [Heading(2, "Cost vs accuracy"), Image(PARETO_PNG, f"{analysis.axis} per problem vs pass@1")]
    blocks.append(
        Para(
            f"Cost axis: {AXIS_LABELS[analysis.axis]}. "
            "On the Pareto front (no row is both cheaper and more accurate): "
            + ", ".join(analysis.pareto)
            + "."
        )
    )

    scaled = [r for r in analysis.rows if r.scaling]
    if scaled:
        blocks.append(Heading(2, "Scaling with the number of agents"))
        for r in scaled:
            curve = r.scaling or {}
            blocks.append(
                Table(
                    [f"{r.name}: k agents", "vote", "logprob only", "public tests only", "oracle (coverage)"],
                    [
                        [k, pct(v["vote"]), pct(v["logprob"]), pct(v["public"]), pct(v["oracle"])]
                        for k, v in curve.items()
                    ],
                )
            )
        blocks.append(
            Para(
                "Each cell: the expected pass@1 of a team of k of the row's agents, over subsets of its "
                "stored drafts (all subsets when few, else a fixed-seed sample), with each selector replayed "
                "on the drafts' stored public-test outcomes and log-probabilities; correctness is each "
                "draft's hidden-test verdict, graded after the run for this report only. Oracle: the chance "
                "that some draft of the subset is correct."
            )
        )

    for b in analysis.breakdowns:
        blocks.append(Heading(2, f"By {b.by}"))
        names = [r.name for r in analysis.rows]
        blocks.append(
            Table(
                [b.by, *names],
                [[g, *(_cell(b.cells[g][n].solved, b.cells[g][n].total) for n in names)] for g in b.groups],
            )
        )
        blocks.append(Image(chart_name(b), f"pass@1 by {b.by}"))
        blocks += _selection_gap(analysis, b)

    if analysis.calibration is not None and analysis.calibration.out_of_fold is not None:
        blocks += _calibration_section(analysis.calibration)

    if analysis.per_problem:
        blocks += _problems_section(analysis)

    blocks.append(Heading(2, "Provenance"))
    versions = ", ".join(f"{k} {v}" for k, v in sorted(analysis.run.versions.items()))
    blocks.append(Para(f"Created {analysis.run.created_at}. Versions: {versions}."))
    blocks.append(Code(json.dumps(cfg.model_dump(mode="json"), indent=2)))
    return blocks


def _calibration_section(cal: Calibration) -> list[Block]:
    fit = cal.out_of_fold
    assert fit is not None
    return [
        Heading(2, "How far to trust an answer"),
        Para(
            "Agreement is not correctness (agents often share a mistake), so answers carry an estimated "
            "probability of being correct: a logistic model of what the team saw before grading (the share "
            "of candidates behaving like the answer, its public tests, its mean token log-probability, how "
            "the selector chose, team size, strategy). Fitted on this run; its quality below is measured on "
            f"problems it was not fitted on (5-fold cross-validation by problem, {fit.results} results): Brier "
            f"score {fit.brier:.3f} against {fit.brier_base:.3f} for predicting the overall pass rate for "
            f"every answer, expected calibration error {fit.ece:.3f}."
        ),
        Table(
            ["estimated P(correct)", "observed pass rate", "results"],
            [[pct(p), pct(y), str(n)] for p, y, n in fit.bins],
        ),
        Image(CALIBRATION_PNG, "reliability of the estimate"),
    ]


def trace_page(trace: str) -> str:
    """Where the report writes the readable page of a trace file (``traces/ID.json`` → ``traces/ID.html``)."""
    return str(Path(trace).with_suffix(".html"))


def _problems_section(a: Analysis) -> list[Block]:
    """Every problem's result in every row, each linked to the run's trace (why a row won or lost)."""
    names = [r.name for r in a.rows]
    marks = {True: "✓", False: "✗"}
    rows: list[list[Cell]] = []
    for p in a.per_problem:
        line: list[Cell] = [p.id]
        for n in names:
            c = p.cells.get(n)
            if c is None:
                line.append("–")
                continue
            text = "error" if c.status == "error" else marks[c.passed]
            line.append(Link(text, trace_page(c.trace)) if c.trace else text)
        rows.append(line)
    differ = sum(len({c.passed for c in p.cells.values()}) > 1 for p in a.per_problem)
    return [
        Heading(2, "Problems"),
        Para(
            f"✓ passed, ✗ failed; each mark links to that run's trace (drafts, test results, reviews, the "
            f"vote, grading). The rows disagree on {differ} of {len(a.per_problem)} problems."
        ),
        Table(["problem", *names], rows),
    ]


def write_trace_pages(analysis: Analysis, directory: Path) -> list[Path]:
    """A readable HTML page beside each trace file the problem table links to (the ``memdoor trace``
    timeline, code and reviews included); traces that cannot be read are left unlinked-to."""
    written = []
    for p in analysis.per_problem:
        for c in p.cells.values():
            if not c.trace:
                continue
            source = directory / c.trace
            if Path(c.trace).is_absolute() or ".." in Path(c.trace).parts:
                continue  # a results file edited by hand never makes the report write outside its directory
            try:
                record = TraceRecord.model_validate_json(source.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            page = directory / trace_page(c.trace)
            title = f"trace {record.trace.id}"
            page.write_text(to_html([Code(render_record(record, code=True))], title), encoding="utf-8")
            written.append(page)
    return written


def _selection_gap(a: Analysis, b: Breakdown) -> list[Block]:
    """Selected vs oracle per group, for the rows whose candidates passed where the choice did not."""
    names = [r.name for r in a.rows if r.oracle_solved is not None and r.oracle_solved > r.solved]
    if not names:
        return []

    def gap(c: GroupCounts) -> str:
        return "–" if c.oracle is None or not c.total else f"{c.solved} / {c.oracle} of {c.total}"

    return [
        Para(
            f"Selected / oracle by {b.by}: problems the row solved, and those where some candidate it made "
            "passes (what a perfect selector would solve); rows whose selection lost nothing are left out."
        ),
        Table([b.by, *names], [[g, *(gap(b.cells[g][n]) for n in names)] for g in b.groups]),
    ]


def _cell(solved: int, total: int) -> str:
    return f"{solved}/{total} ({pct(solved / total)})" if total else "–"


def _pass_table(a: Analysis) -> Table:
    rows = []
    for r in a.rows:
        gap = None if r.oracle_rate is None or r.pass_at_1 is None else r.oracle_rate - r.pass_at_1
        rows.append(
            [
                r.name + (" (baseline)" if r.baseline else ""),
                r.team or " + ".join(r.models),
                f"{r.solved}/{r.total}",
                pct(r.pass_at_1),
                ci(r.ci95),
                pct(r.oracle_rate),
                "–" if gap is None else f"{100 * gap:.1f}",
                str(r.errors),
            ]
        )
    return Table(
        [
            "row",
            "team",
            "solved",
            "pass@1",
            "95% CI",
            "oracle ceiling",
            "ceiling − selected (points)",
            "errors",
        ],
        rows,
    )


def _cost_table(a: Analysis) -> Table:
    def s3(sp, digits=0):
        return f"{num(sp.mean, digits)} / {num(sp.median, digits)} / {num(sp.p95, digits)}"

    def flops(r: RowStats) -> str:
        return "unknown size" if r.compute is None else f"{r.compute.mean:.3g}"

    def hardware(r: RowStats) -> str:
        value = a.hardware_usd(r)
        return "–" if value is None else f"${value:.4f}"

    return Table(
        [
            "row",
            "tokens mean / median / p95",
            "compute (FLOPs) mean",
            "calls mean / median / p95",
            "seconds mean / median / p95",
            "engine seconds mean",
            "$ mean / median / p95",
            "$ hardware mean",
        ],
        [
            [
                r.name,
                s3(r.tokens),
                flops(r),
                s3(r.calls, 1),
                s3(r.seconds, 1),
                "–" if r.engine_seconds is None else num(r.engine_seconds.mean, 1),
                usd(r),
                hardware(r),
            ]
            for r in a.rows
        ],
    )


def _computed(a: Analysis) -> str:
    """What the whole run computed, against what its rows were charged (paired draws)."""
    compute = "" if a.compute_made is None else f", {a.compute_made:.3g} FLOPs"
    return (
        f"The run computed {a.calls_made:,} model calls ({a.engine_seconds_made:,.1f} engine seconds{compute}); "
        f"its rows were charged {a.calls_charged:,} calls: each row is charged every call it made, as if it "
        "had run alone, and a request several rows made identically (paired draws) was computed once. "
        "Hardware dollars: $/GPU-hour given to the report × seconds per problem."
    )


def write_report(analysis: Analysis, directory: Path) -> list[Path]:
    """Write report.md, report.html and the charts into ``directory``; returns the paths written."""
    directory = Path(directory)
    charts = write_charts(analysis, directory)
    blocks = build(analysis)
    md, page = directory / REPORT_MD, directory / REPORT_HTML
    md.write_text(to_markdown(blocks), encoding="utf-8")
    page.write_text(to_html(blocks, "Memdoor bench report"), encoding="utf-8")
    return [md, page, *charts, *write_trace_pages(analysis, directory)]
