"""How a report writes its numbers: rates, intervals, p-values ("–" for what is unknown)."""

from __future__ import annotations

import math


def pct(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def ci(pair: tuple[float | None, float | None], points: bool = False) -> str:
    lo, hi = pair
    if lo is None or hi is None:
        return "–"
    if points:
        return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def num(x: float | None, digits: int = 1) -> str:
    if x is None or math.isnan(x):
        return "–"
    return f"{x:,.{digits}f}"


def pvalue(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.2e}"
