"""Choosing the problems of a bench run, in a stable order, and fingerprinting them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from memdoor.bench.config import BenchConfig, ProblemFilter, solve_config
from memdoor.bench.records import RunRecord
from memdoor.bench.revision import row_revision
from memdoor.core.problem import Problem


def select_problems(problems: Sequence[Problem], filters: ProblemFilter) -> list[Problem]:
    """Problems passing every filter, in the loader's order (file order; HumanEval/0, /1, ... for
    ``humaneval``), then the first ``limit`` of them.

    Filters are inclusive. With a difficulty filter, problems of unknown difficulty are dropped; with
    a date filter, problems of unknown release date are dropped.
    """
    kept = []
    for p in problems:
        if filters.difficulty is not None and (p.difficulty or "").lower() not in filters.difficulty:
            continue
        if filters.since is not None and (p.release_date is None or p.release_date < filters.since):
            continue
        if filters.until is not None and (p.release_date is None or p.release_date > filters.until):
            continue
        kept.append(p)
    if filters.limit is not None:
        kept = kept[: filters.limit]
    return kept


def problems_digest(problems: Sequence[Problem]) -> str:
    """SHA-256 of the selected problems' content and order (where they were loaded from excluded),
    so a results directory is resumed only on the very same problems."""
    h = hashlib.sha256()
    for p in problems:
        record = p.model_dump(mode="json", exclude={"source"})
        h.update(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
        h.update(b"\n")
    return h.hexdigest()


def new_run(config: BenchConfig, problems: Sequence[Problem], sandbox: str) -> RunRecord:
    """The record of a run of ``config`` over ``problems`` starting now: the problems' digest, each row's
    settings and revision, the versions of what it runs on (``sandbox``: the isolation in use) and the time."""
    from memdoor.bench.store import now_iso
    from memdoor.bench.versions import package_versions

    rows = []
    for r in config.rows:
        solve = solve_config(config, r)
        revision = row_revision(solve.strategy.name, solve.selector)
        rows.append(r.model_copy(update={"settings": solve.settings(), "revision": revision}))
    return RunRecord(
        config=config.model_copy(update={"rows": rows}),
        problems_sha256=problems_digest(problems),
        problem_count=len(problems),
        versions=package_versions(sandbox),
        created_at=now_iso(),
    )
