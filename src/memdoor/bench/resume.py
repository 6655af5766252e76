"""Whether a results directory's run may continue as the run a command asks for, and the run it becomes."""

from __future__ import annotations

import os
from collections.abc import Collection

from memdoor.bench.records import RunRecord
from memdoor.bench.revision import adopt, check_rules
from memdoor.core.errors import ResultsStoreError


def check_compatible(
    stored: RunRecord,
    wanted: RunRecord,
    directory: str | os.PathLike,
    *,
    redo: Collection[str] = (),
    accept: Collection[str] = (),
) -> RunRecord:
    """The run ``directory`` holds once ``wanted`` continues it, or ResultsStoreError (one line naming
    what differs) unless it may.

    Everything that changes results must match, except the rows: a run may be *extended* with rows
    it does not hold yet (they are added after the stored ones, and replay the stored model calls:
    a new strategy is compared on the very drafts the others had) and may leave stored rows out
    (their results stay; only the rows asked for run). A row of the same name must be the same row,
    with the same settings (a strategy default changed in between would mix two rules in one row),
    unless it is in ``redo`` (its results are dropped and made again). A stored row with no settings
    recorded (an older directory) takes the wanted row's. The same for its revision (memdoor.bench.
    revision), which may also be changed knowingly (``accept``: the row names given --accept-revision).
    """
    a, b = stored.config.identity(), wanted.config.identity()
    differ = [k for k in sorted(set(a) | set(b)) if k != "rows" and a.get(k) != b.get(k)]
    if stored.problems_sha256 != wanted.problems_sha256:
        differ.append("problems")
    held = {r.name: r for r in stored.config.rows}
    clash = [r.name for r in wanted.config.rows if r.name in held and not held[r.name].same_row(r)]
    if clash:
        differ.append(f"rows ({', '.join(clash)} defined otherwise)")
    if differ:
        raise ResultsStoreError(
            f"{directory} holds results of another configuration (differs in: {', '.join(differ)}); "
            "rerun the exact same command to resume (rows may be added or left out), or use another --out"
        )
    check_rules(held, wanted.config.rows, directory, redo=redo, accept=accept)
    wanted_rows = {r.name: r for r in wanted.config.rows}
    rows = [adopt(r, wanted_rows.get(r.name), redo=redo, accept=accept) for r in stored.config.rows]
    rows += [r for r in wanted.config.rows if r.name not in held]
    if rows == stored.config.rows:
        return stored
    return stored.model_copy(update={"config": stored.config.model_copy(update={"rows": rows})})
