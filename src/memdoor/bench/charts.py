"""PNG charts of an analysis, drawn with matplotlib's object API on the Agg canvas (no pyplot, no
global backend state)."""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

from memdoor.bench.analysis import AXIS_LABELS, Analysis, Breakdown
from memdoor.bench.frontier import single_model_frontier
from memdoor.bench.rowstats import RowStats
from memdoor.core.errors import UsageError

PARETO_PNG = "pareto.png"
PASS_PNG = "pass_at_1.png"


def _figure(width: float, height: float):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("matplotlib"):
            raise
        raise UsageError(
            "memdoor report draws charts with matplotlib: pip install 'memdoor[report]'"
        ) from None

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _shared_stem(words: list[str]) -> str:
    """The prefix all ``words`` share, cut back to its last separator; "" for fewer than two words."""
    if len(words) < 2:
        return ""
    first, last = min(words), max(words)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[: max(first[:n].rfind(c) for c in "-:/_") + 1]


def chart_labels(analysis: Analysis) -> dict[str, str]:
    """Row name → a shorter label for charts: model specs lose ``local:`` and the prefix all models share
    (``cascade:2@local:qwen2.5-coder-0.5b*1+local:qwen2.5-coder-1.5b*1`` → ``cascade:2@0.5b+1.5b``), and
    ``*1`` goes. Full names when the short ones would collide. Tables keep the full names."""
    models = sorted({m for r in analysis.rows for m in r.models}, key=len, reverse=True)
    bare = {m: m.removeprefix("local:") for m in models}
    shared = _shared_stem(list(bare.values()))
    short = {m: b[len(shared) :] or b for m, b in bare.items()}
    labels = {}
    for r in analysis.rows:
        label = r.name
        for m in models:
            label = label.replace(m, short[m])
        labels[r.name] = re.sub(r"\*1(?=\+|$)", "", label)
    return labels if len(set(labels.values())) == len(labels) else {r.name: r.name for r in analysis.rows}


def _pct(x: float | None) -> float:
    return 0.0 if x is None else 100 * x


def point_keys(names: list[str]) -> dict[str, str]:
    """A short key per row for a chart's points (A, B, … Z, then AA, AB, …), in the order given."""
    out = {}
    for i, name in enumerate(names):
        key = ""
        i += 1
        while i:
            i, rem = divmod(i - 1, 26)
            key = chr(ord("A") + rem) + key
        out[name] = key
    return out


def key_text(keys: dict[str, str], label: dict[str, str], width: int = 58) -> str:
    """The chart's key: one entry per row, ``A  label``, a long label wrapped under itself."""
    lines = []
    for name, key in keys.items():
        wrapped = textwrap.wrap(label[name], width, break_on_hyphens=False) or [""]
        lines.append(f"{key:<3}{wrapped[0]}")
        lines += [f"{'':<3}{more}" for more in wrapped[1:]]
    return "\n".join(lines)


def pareto_chart(analysis: Analysis, path: Path) -> Path:
    """Cost per problem on the analysis' axis (x) against pass@1 with its 95% interval (y); the front
    joined, the best single model at no more cost as a staircase. Each point carries a letter (cheapest
    first); the key beside the plot names the rows, so long names never crowd the plot."""
    axis = analysis.axis
    fig = _figure(11.0, 5.2)
    ax, side = fig.subplots(1, 2, width_ratios=[3, 2])
    side.axis("off")
    front = set(analysis.pareto)
    rows = sorted(
        (r for r in analysis.rows if r.pass_at_1 is not None),
        key=lambda r: (r.cost(axis) or 0.0, -(r.pass_at_1 or 0.0)),
    )
    keys = point_keys([r.name for r in rows])
    placed: list[tuple[float, float]] = []  # label anchors so far, in axes units, to stagger close ones
    span = max((r.cost(axis) or 0.0 for r in rows), default=0.0) or 1.0
    for r in rows:
        y = _pct(r.pass_at_1)
        lo, hi = _pct(r.ci95[0]), _pct(r.ci95[1])
        on_front = r.name in front
        ax.errorbar(
            [r.cost(axis) or 0.0],
            [y],
            yerr=[[y - lo], [hi - y]],
            fmt="s" if r.baseline else "o",
            color="tab:red" if on_front else "tab:gray",
            capsize=3,
            markersize=7,
            zorder=3 if on_front else 2,  # a front point stays visible over a gray one at the same place
        )
        here = ((r.cost(axis) or 0.0) / span, y / 100)
        near = sum(1 for x0, y0 in placed if abs(x0 - here[0]) < 0.06 and abs(y0 - here[1]) < 0.04)
        placed.append(here)
        ax.annotate(
            keys[r.name],
            (r.cost(axis) or 0.0, y),
            textcoords="offset points",
            xytext=(5 + 9 * near, 3),
            fontsize=8,
            fontweight="bold" if on_front else "normal",
        )
    side.text(
        0, 1, key_text(keys, chart_labels(analysis)), va="top", ha="left", fontsize=7, family="monospace"
    )
    pts = sorted((r.cost(axis) or 0.0, _pct(r.pass_at_1)) for r in rows if r.name in front)
    if len(pts) > 1:
        ax.plot(
            [p[0] for p in pts], [p[1] for p in pts], "--", color="tab:red", linewidth=1, label="Pareto front"
        )
    single = _single_model_steps(analysis, rows)
    if single:
        ax.step(
            *single,
            where="post",
            color="tab:blue",
            linewidth=1,
            alpha=0.7,
            label="best single model at ≤ cost",
        )
    if len(pts) > 1 or single:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel(AXIS_LABELS[axis])
    ax.set_ylabel("pass@1 (%), 95% bootstrap CI")
    ax.set_title("Cost vs accuracy (red, bold: on the Pareto front; squares: baselines)", fontsize=10)
    ax.set_ylim(0, 100)
    costs = [r.cost(axis) or 0.0 for r in rows]
    if costs and min(costs) > 0 and max(costs) > 20 * min(costs):
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    ax.margins(x=0.06)
    fig.savefig(path)
    return path


def _single_model_steps(analysis: Analysis, rows: list[RowStats]) -> tuple[list[float], list[float]] | None:
    """The single-model frontier as steps on the chart's axis (the best a single model did at no more cost,
    up to the chart's costliest row); None without a single-model row."""
    if analysis.compute_matched is None:
        return None
    axis = analysis.axis
    names = single_model_frontier(rows, analysis.compute_matched.single_model_rows, axis)
    if not names:
        return None
    of = {r.name: r for r in rows}
    xs = [of[n].cost(axis) or 0.0 for n in names]
    ys = [_pct(of[n].pass_at_1) for n in names]
    end = max(r.cost(axis) or 0.0 for r in rows)
    return [*xs, max(end, xs[-1])], [*ys, ys[-1]]


def pass_chart(analysis: Analysis, path: Path) -> Path:
    """pass@1 per row with its 95% interval, and the oracle ceiling (any candidate correct) as a tick."""
    rows = analysis.rows
    fig = _figure(7.5, 0.9 + 0.45 * max(1, len(rows)))
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows, strict=True):
        x = _pct(r.pass_at_1)
        lo, hi = _pct(r.ci95[0]), _pct(r.ci95[1])
        ax.barh([y], [x], color="tab:orange" if r.baseline else "tab:blue", alpha=0.8)
        ax.errorbar([x], [y], xerr=[[x - lo], [hi - x]], fmt="none", color="black", capsize=3)
        if r.oracle_rate is not None:
            ax.plot([_pct(r.oracle_rate)], [y], marker="|", markersize=16, color="tab:green")
    label = chart_labels(analysis)
    ax.set_yticks(ys, [label[r.name] for r in rows], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("pass@1 (%) with 95% CI; green tick: oracle ceiling")
    ax.grid(True, axis="x", alpha=0.3)
    fig.savefig(path)
    return path


def breakdown_chart(analysis: Analysis, breakdown: Breakdown, path: Path) -> Path:
    """Grouped bars: pass@1 per group and row; the legend sits below the axes (one entry per row)."""
    from matplotlib import colormaps

    names = [r.name for r in analysis.rows]
    label = chart_labels(analysis)
    groups = breakdown.groups
    columns = min(3, len(names))
    fig = _figure(max(6.0, 1.2 + 0.9 * len(groups)), 3.6 + 0.2 * math.ceil(len(names) / max(1, columns)))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(names))
    palette = colormaps["tab10" if len(names) <= 10 else "tab20"]
    for i, name in enumerate(names):
        xs = [g + (i - (len(names) - 1) / 2) * width for g in range(len(groups))]
        hs = [_pct(breakdown.cells[g][name].rate) for g in groups]
        ax.bar(xs, hs, width=width, label=label[name], color=palette(i % palette.N))
    labels = [f"{g}\n(n={max(c.total for c in breakdown.cells[g].values())})" for g in groups]
    ax.set_xticks(range(len(groups)), labels, fontsize=8, rotation=0 if len(groups) < 8 else 45)
    ax.set_ylim(0, 100)
    ax.set_ylabel("pass@1 (%)")
    ax.set_title(f"pass@1 by {breakdown.by}")
    fig.legend(loc="outside lower center", fontsize=7, ncols=columns)
    ax.grid(True, axis="y", alpha=0.3)
    fig.savefig(path)
    return path


CALIBRATION_PNG = "calibration.png"


def calibration_chart(analysis: Analysis, path: Path) -> Path:
    """Reliability diagram of the out-of-fold estimates: mean estimate (x) against observed pass rate (y)
    per bin, point size by the bin's results; the diagonal is perfect calibration."""
    fit = analysis.calibration.out_of_fold if analysis.calibration else None
    fig = _figure(5.0, 4.6)
    ax = fig.add_subplot()
    ax.plot([0, 100], [0, 100], "--", color="tab:gray", linewidth=1, label="perfectly calibrated")
    if fit is not None and fit.bins:
        most = max(n for _, _, n in fit.bins)
        ax.scatter(
            [100 * p for p, _, _ in fit.bins],
            [100 * y for _, y, _ in fit.bins],
            s=[20 + 180 * n / most for _, _, n in fit.bins],
            color="tab:blue",
            label="bins (size: results)",
        )
        ax.plot(
            [100 * p for p, _, _ in fit.bins],
            [100 * y for _, y, _ in fit.bins],
            color="tab:blue",
            linewidth=1,
        )
    ax.set_xlabel("estimated P(correct) (%), out of fold")
    ax.set_ylabel("observed pass rate (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_title("Reliability of the estimate")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.3)
    fig.savefig(path)
    return path


def chart_name(breakdown: Breakdown) -> str:
    return f"by_{breakdown.by.replace(' ', '_')}.png"


def write_charts(analysis: Analysis, directory: Path) -> list[Path]:
    """All charts of ``analysis`` as PNG files in ``directory``; returns their paths."""
    paths = [pareto_chart(analysis, directory / PARETO_PNG), pass_chart(analysis, directory / PASS_PNG)]
    for b in analysis.breakdowns:
        paths.append(breakdown_chart(analysis, b, directory / chart_name(b)))
    if analysis.calibration is not None and analysis.calibration.out_of_fold is not None:
        paths.append(calibration_chart(analysis, directory / CALIBRATION_PNG))
    return paths
