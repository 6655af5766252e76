"""Two sections of the bench report: the compute-matched verdict (memdoor.bench.frontier) and the serving
estimate (memdoor.bench.serving)."""

from __future__ import annotations

from memdoor.bench.document import Block, Heading, Para, Table
from memdoor.bench.formatting import ci, num, pct, pvalue
from memdoor.bench.frontier import ComputeMatched
from memdoor.bench.rowstats import ALPHA, TeamVsSingle
from memdoor.bench.serving import ServingEstimate

COST_WORDS = {"compute": "compute (FLOPs)", "tokens": "tokens"}


def _rate(solved: int, problems: int) -> str:
    return pct(solved / problems if problems else None)


def _listed(names: list[str], of: dict[str, TeamVsSingle]) -> str:
    return "; ".join(f"{n} (against {of[n].baseline}, {of[n].pair.wins}/{of[n].pair.losses})" for n in names)


def matched_section(m: ComputeMatched) -> list[Block]:
    """The table of every compared row against its best single-model row at no more cost, and the answer."""
    blocks: list[Block] = [Heading(2, "Against the best single model at no more cost")]
    cost = COST_WORDS.get(m.cost_axis, m.cost_axis)
    reference = f"{m.biggest_model}'s own rows" if m.biggest_model else "the single-model rows"
    blocks.append(
        Para(
            f"Each row except {reference} against the single-model row (one model, any strategy, any number "
            f"of draws) that solved the most at no more {cost} per problem than it; ties go to the cheaper. "
            "A smaller model's own rows are matched with other models' rows only. Exact McNemar test on the "
            f"paired problems, Holm-corrected over these {len(m.comparisons)} comparisons. Single-model "
            f"frontier (cheapest first): {', '.join(m.frontier) or 'none'}."
        )
    )
    if m.comparisons:
        blocks.append(
            Table(
                [
                    "row",
                    "best single-model row at ≤ its cost",
                    "row pass@1",
                    "single pass@1",
                    "difference (points) [95% CI]",
                    "wins / losses",
                    "McNemar p",
                    "Holm p",
                    f"{m.cost_axis} ×",
                ],
                [
                    [
                        t.team,
                        t.baseline,
                        _rate(t.pair.a_solved, t.pair.problems),
                        _rate(t.pair.b_solved, t.pair.problems),
                        f"{100 * (t.pair.diff or 0):+.1f} {ci(t.pair.diff_ci95, True)}",
                        f"{t.pair.wins} / {t.pair.losses}",
                        pvalue(t.pair.p_value),
                        pvalue(t.holm_p),
                        num(t.compute_ratio if m.cost_axis == "compute" else t.token_ratio, 2),
                    ]
                    for t in m.comparisons
                ],
            )
        )
    of = {t.team: t for t in m.comparisons}
    even = [t.team for t in m.comparisons if t.team not in m.better and t.team not in m.worse]
    text = [
        f"Better than the best single model at no more cost (Holm p < {ALPHA:.0%}): "
        + (_listed(m.better, of) if m.better else "none")
        + ".",
        "The single model is better at no more cost: "
        + (_listed(m.worse, of) if m.worse else "nowhere")
        + ".",
    ]
    if even:
        text.append(f"No significant difference: {', '.join(even)}.")
    if m.unmatched:
        text.append(f"No single-model row costs as little as: {', '.join(m.unmatched)}.")
    blocks.append(Para(" ".join(text)))
    return blocks


def serving_section(s: ServingEstimate) -> list[Block]:
    """Dollars and latency per problem on the user's serving setup, with the inputs and assumptions."""
    return [
        Heading(2, "Dollars and latency on your serving setup"),
        Para("Assumptions (memdoor.bench.serving): " + "; ".join(s.assumptions) + "."),
        Table(
            [
                "row",
                "work (reference tokens) per problem",
                "$ per problem",
                "problems per hour",
                "model seconds per problem (calls at once – one after another)",
            ],
            [
                [
                    name,
                    num(r.work_tokens, 0),
                    f"${r.usd_per_problem:.6f}",
                    num(r.problems_per_hour, 0),
                    f"{num(r.latency_s[0], 2)} – {num(r.latency_s[1], 2)}",
                ]
                for name, r in s.rows.items()
            ],
        ),
    ]
