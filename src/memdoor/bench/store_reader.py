"""Reading a results database: the run, its rows, problems, results, kept model calls and sessions.

:class:`StoreReader` is what reports and exports need; :class:`memdoor.bench.store.ResultsStore` adds
opening, locking and writing to it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memdoor.bench.config import RowSpec
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.store_schema import COLUMNS, DB_NAME, read_run, result_columns, row_to_record
from memdoor.core.messages import ModelResponse


class StoreReader:
    """An open results database of ``directory``, read through ``conn``."""

    def __init__(self, directory: Path, conn: sqlite3.Connection):
        self.directory = directory
        self._conn = conn
        self._conn.row_factory = sqlite3.Row

    @staticmethod
    def db_path(directory: str | os.PathLike) -> Path:
        return Path(directory) / DB_NAME

    def run(self) -> RunRecord:
        return read_run(self._conn, self.db_path(self.directory))

    def rows(self) -> list[RowSpec]:
        return [
            RowSpec.model_validate_json(r[0])
            for r in self._conn.execute("SELECT spec_json FROM rows ORDER BY position")
        ]

    def problems(self) -> list[ProblemInfo]:
        return [
            ProblemInfo.model_validate_json(r[0])
            for r in self._conn.execute("SELECT info_json FROM problems ORDER BY position")
        ]

    def results(self, *, full: bool = False) -> list[ResultRecord]:
        """Every stored result, in problem order then row order. ``full`` includes the JSON blobs."""
        present = result_columns(self._conn)
        cols = [c for c in COLUMNS if c in present and (full or not c.endswith("_json"))]
        sql = (
            f"SELECT {', '.join('r.' + c for c in cols)} FROM results r "
            "JOIN problems p ON p.id = r.problem_id JOIN rows w ON w.name = r.row "
            "ORDER BY p.position, w.position"
        )
        return [row_to_record(r) for r in self._conn.execute(sql)]

    def statuses(self) -> dict[tuple[str, str], ResultRecord]:
        """(problem, row) → stored result, without the JSON blobs (for deciding what to run)."""
        return {(r.problem_id, r.row): r for r in self.results()}

    def _call_rows(self) -> dict[str, tuple[str, ModelResponse]]:
        """key → (model spec, response) of every kept call (none in a directory made before calls were kept)."""
        try:
            rows = self._conn.execute("SELECT key, model, response_json FROM calls ORDER BY key").fetchall()
        except sqlite3.OperationalError:
            return {}
        return {r[0]: (r[1], ModelResponse.model_validate_json(r[2])) for r in rows}

    def calls(self) -> dict[str, ModelResponse]:
        """Every kept model call, by request key."""
        return {k: r for k, (_, r) in self._call_rows().items()}

    def call_models(self) -> list[tuple[str, ModelResponse]]:
        """(model spec, response) of every kept call, in key order."""
        return list(self._call_rows().values())

    def sessions(self) -> list[dict]:
        return [dict(r) for r in self._conn.execute("SELECT * FROM sessions ORDER BY id")]
