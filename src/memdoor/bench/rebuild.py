"""A committed results directory made whole again: its database rebuilt from its portable files.

A run is committed as ``run.json``, ``results.jsonl`` and ``calls.jsonl`` (:mod:`memdoor.bench.portable`);
its SQLite database stays out of git. ``memdoor report`` on a fresh checkout rebuilds the database here,
from those files and the run's suite (loaded as the run loaded it, and checked against the run's problem
digest), with no model and no sandbox: every result and call comes from the files, nothing is recomputed.
"""

from __future__ import annotations

from pathlib import Path

from memdoor.bench import portable
from memdoor.bench.records import ProblemInfo
from memdoor.bench.store import ResultsStore
from memdoor.bench.suite import problems_digest, select_problems
from memdoor.core.errors import ResultsStoreError
from memdoor.problems.load import load_problems


def rebuildable(directory: Path) -> bool:
    """Whether ``directory`` holds portable files but no database."""
    return (
        not ResultsStore.db_path(directory).exists()
        and (directory / portable.RUN_JSON).is_file()
        and (directory / portable.RESULTS_JSONL).is_file()
    )


def rebuild(directory: Path) -> None:
    """Build ``directory``'s database from its portable files. ResultsStoreError when its run record is
    unreadable or its suite no longer gives the same problems; ProblemFormatError/UsageError when the
    suite cannot be loaded here (e.g. a data file that is not on this machine)."""
    run = portable.read_run(directory)
    if run is None:
        raise ResultsStoreError(f"{directory}: {portable.RUN_JSON} cannot be read")
    problems = select_problems(load_problems(run.config.suite), run.config.filters)
    if problems_digest(problems) != run.problems_sha256:
        raise ResultsStoreError(
            f"{directory}: its suite {run.config.suite} no longer gives the problems the run was made on "
            "(their digest differs from the one in its run.json); run the report where that suite is"
        )
    infos = [ProblemInfo.of(p, i) for i, p in enumerate(problems)]
    with ResultsStore.create_or_resume(directory, run, infos, argv=["memdoor", "report", str(directory)]):
        pass
