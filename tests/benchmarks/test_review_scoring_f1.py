"""The review benchmark's F1 interval (review_cases.scoring.f1_text): the same outcomes give the same
interval whatever order a run wrote its cases in."""

from __future__ import annotations

from review_cases.scoring import f1_of, f1_text

KINDS = ["missed"] * 11 + ["caught"] * 12 + ["refactor"] * 22 + ["intended"] * 22 + ["mixed"] * 5


def test_the_f1_interval_is_the_same_whatever_order_the_cases_were_written_in():
    rows = [
        {
            "case": f"HumanEval/{i}:{kind}",
            "kind": kind,
            "flagged": kind == "caught" or (kind == "missed" and i % 2 == 0),
        }
        for i, kind in enumerate(KINDS)
    ]
    shown = f1_text(rows, "flagged")
    assert shown == f1_text(list(reversed(rows)), "flagged")
    assert shown == f1_text(rows[5:] + rows[:5], "flagged")
    lo, hi = (float(x) for x in shown.split("[")[1].rstrip("]").split(", "))
    assert 0 < lo < f1_of(rows, "flagged") < hi < 1
