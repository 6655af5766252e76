"""The dry run's print-out: counts per kind and per transform, and a sample case of each kind."""

from __future__ import annotations

import difflib
from collections import Counter

from review_cases.records import KINDS, ReviewCase


def counts(cases: list[ReviewCase]) -> str:
    by_kind = Counter(c.kind for c in cases)
    lines = [f"{len(cases)} cases from {len({c.problem_id for c in cases})} functions"]
    for kind in KINDS:
        mine = [c for c in cases if c.kind == kind]
        transforms = Counter(c.transform for c in mine)
        detail = ", ".join(f"{t} {n}" for t, n in sorted(transforms.items(), key=lambda x: (-x[1], x[0])))
        lines.append(f"  {kind}: {by_kind[kind]}" + (f" ({detail})" if detail else ""))
    claims = Counter(c.claim for c in cases if c.claim)
    if claims:
        lines.append("  bug descriptions claim: " + ", ".join(f"{k} {n}" for k, n in sorted(claims.items())))
    caught_mixed = sum(1 for c in cases if c.kind == "mixed" and c.public_fails)
    if by_kind["mixed"]:
        lines.append(f"  mixed cases a changed public test fails: {caught_mixed} of {by_kind['mixed']}")
    return "\n".join(lines)


def show(case: ReviewCase) -> str:
    diff = difflib.unified_diff(
        case.before.split("\n"), case.after.split("\n"), "a/solution.py", "b/solution.py", lineterm="", n=1
    )
    head = [
        f"--- {case.id} [{case.kind}] {case.transform}",
        f"description: {case.description}",
        "hidden tests: " + ", ".join(f"{k} {v}" for k, v in case.evidence.items()),
    ]
    return "\n".join([*head, *list(diff)[2:]])


def sample(cases: list[ReviewCase], per_kind: int = 1) -> str:
    out = []
    for kind in KINDS:
        out += [show(c) for c in [c for c in cases if c.kind == kind][:per_kind]]
    return "\n\n".join(out)
