"""The results store: one SQLite database per results directory (WAL, committed per result).

The database's layout is :mod:`memdoor.bench.store_schema`'s; reading it, :mod:`memdoor.bench.store_reader`'s;
whether a stored run may continue as another, :mod:`memdoor.bench.resume`'s. This module opens a directory
(reader or writer), writes results and model calls, and keeps the portable files in step.

Beside the database the writer keeps the portable files (:mod:`memdoor.bench.portable`: ``run.json``,
``results.jsonl``, ``calls.jsonl``), small sorted text a run can be committed as and continued from on
another machine: a directory holding only them is rebuilt into a database and resumed.

The database only ever appears complete: it is built under a temporary name and renamed into
place. A writer holds an exclusive lock on ``DIR/.bench.lock`` (released by the kernel even on
SIGKILL), so two benches never work on one directory at once. Readers (reports, exports) never
create or change a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from memdoor.bench import portable, resume
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.store_reader import StoreReader
from memdoor.bench.store_schema import (
    COLUMNS,
    DB_NAME,
    LOCK_NAME,
    SCHEMA_VERSION,
    SLIM_COLUMNS,
    build,
    connect_readonly,
    connect_writer,
    now_iso,
    read_run,
    record_to_row,
    row_to_record,
)
from memdoor.core.errors import ResultsStoreError
from memdoor.core.messages import ModelResponse

__all__ = ["DB_NAME", "LOCK_NAME", "SCHEMA_VERSION", "ResultsStore", "now_iso"]


class ResultsStore(StoreReader):
    """A results directory's database. Open with :meth:`create_or_resume` (writer) or :meth:`open` (reader)."""

    def __init__(self, directory: Path, conn: sqlite3.Connection, lock_fd: int | None):
        super().__init__(directory, conn)
        self._lock_fd = lock_fd
        self.dropped = 0
        """Results dropped when the writer opened (rows named in ``redo``)."""

    # -- opening ---------------------------------------------------------------------------------

    @classmethod
    def inspect(cls, directory: str | os.PathLike) -> RunRecord | None:
        """The run a directory holds, or None when it holds no results database. Touches nothing."""
        if Path(directory).exists() and not Path(directory).is_dir():
            raise ResultsStoreError(f"{directory} is not a directory")
        path = cls.db_path(directory)
        if not path.exists():  # a directory holding only the portable files (another machine's run)
            return portable.read_run(Path(directory))
        conn = connect_readonly(path)
        try:
            return read_run(conn, path)
        finally:
            conn.close()

    @classmethod
    def open(cls, directory: str | os.PathLike) -> ResultsStore:
        """Open an existing results directory read-only (reports, exports)."""
        path = cls.db_path(directory)
        if not path.exists():
            hint = ""
            if (Path(directory) / portable.RESULTS_JSONL).is_file():
                hint = f"; it holds {portable.RESULTS_JSONL}: memdoor report {directory} rebuilds the database from it"
            raise ResultsStoreError(f"{directory}: no bench results here ({DB_NAME} not found{hint})")
        return cls(Path(directory), connect_readonly(path), None)

    @classmethod
    def create_or_resume(
        cls,
        directory: str | os.PathLike,
        run: RunRecord,
        problems: Sequence[ProblemInfo],
        *,
        argv: Sequence[str] = (),
        redo: Collection[str] = (),
        accept: Collection[str] = (),
    ) -> ResultsStore:
        """Open ``directory`` for writing: create it for ``run``, or resume it if it holds the same run.

        Refuses (ResultsStoreError, nothing changed) a directory holding another configuration, and
        one another bench is writing to. The stored results of the rows named in ``redo`` are dropped
        (``store.dropped`` says how many), so the run makes them again under the row's current settings.
        """
        directory = Path(directory)
        versions = run.versions  # this session's, for its sessions row (the run keeps its first ones)
        stored = cls.inspect(directory)
        if stored is not None:
            run = resume.check_compatible(stored, run, directory, redo=redo, accept=accept)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            lock_fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise ResultsStoreError(f"cannot use {directory}: {e.strerror or e}") from None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise ResultsStoreError(f"{directory} is in use by another memdoor bench") from None
        try:
            path = cls.db_path(directory)
            if not path.exists():
                build(path, run, problems)
            conn = connect_writer(path)
            store = cls(directory, conn, lock_fd)
            merged = read_run(conn, path)
            shipped = portable.read_run(directory)  # rows another machine added travel in run.json
            for other in (shipped, run) if shipped is not None else (run,):
                merged = resume.check_compatible(merged, other, directory, redo=redo, accept=accept)
            store._sync_rows(merged, skip=redo)
            store._import_portable()
            store.dropped = store._redo(merged, redo)
            store._write(
                "INSERT INTO sessions (started_at, argv_json, versions_json) VALUES (?, ?, ?)",
                (now_iso(), json.dumps(list(argv)), json.dumps(versions, sort_keys=True)),
            )
            return store
        except BaseException:
            os.close(lock_fd)
            raise

    def close(self) -> None:
        if self._lock_fd is not None:  # the writer leaves the portable files sorted and complete
            with contextlib.suppress(OSError, sqlite3.Error):
                self._write_portable()
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------------

    def _write(self, sql: str, params: Sequence) -> int:
        if self._lock_fd is None:
            raise ResultsStoreError(f"{self.directory}: opened read-only")
        cur = self._conn.execute(sql, params)
        return cur.rowcount

    def record(self, result: ResultRecord) -> bool:
        """Store one result and commit it. A finished (``done``) pair is never overwritten; an
        ``error`` pair is replaced by its retry (attempts counted). Returns whether it was stored."""
        values = record_to_row(result)
        cols = ", ".join(COLUMNS)
        marks = ", ".join(f":{c}" for c in COLUMNS)
        updates = ", ".join(
            f"{c} = excluded.{c}" for c in COLUMNS if c not in ("problem_id", "row", "attempts")
        )
        sql = (
            f"INSERT INTO results ({cols}) VALUES ({marks}) "
            f"ON CONFLICT (problem_id, row) DO UPDATE SET {updates}, attempts = results.attempts + 1 "
            "WHERE results.status = 'error'"
        )
        try:
            with self._transaction():
                stored = self._write(sql, values) == 1
        except sqlite3.Error as e:
            raise ResultsStoreError(
                f"cannot store the result of {result.problem_id} / {result.row} in {self.directory}: {e}"
            ) from None
        if stored:
            self._append_portable(portable.RESULTS_JSONL, portable.result_line(self._stored(result)))
        return stored

    def _stored(self, result: ResultRecord) -> ResultRecord:
        """The result as the database now holds it (attempts counted), without the blobs."""
        cols = SLIM_COLUMNS
        row = self._conn.execute(
            f"SELECT {', '.join(cols)} FROM results WHERE problem_id = ? AND row = ?",
            (result.problem_id, result.row),
        ).fetchone()
        return row_to_record(row)

    def _append_portable(self, name: str, line: str) -> None:
        try:
            portable.append(self.directory, name, line)
        except OSError as e:
            raise ResultsStoreError(f"cannot write {self.directory / name}: {e.strerror or e}") from None

    def _import_portable(self) -> None:
        """Take in what the portable files hold and the database does not (a run continued on another
        machine, or a kill between the database and the file), then rewrite them sorted."""
        results = portable.read_results(self.directory)
        calls = portable.read_calls(self.directory)
        cols = SLIM_COLUMNS
        sql = (
            f"INSERT INTO results ({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)}) "
            f"ON CONFLICT (problem_id, row) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in cols)} "
            "WHERE results.status = 'error' AND excluded.status = 'done'"
        )
        with self._transaction():
            for r in results.values():
                self._write(sql, record_to_row(r, exclude=set(COLUMNS) - set(SLIM_COLUMNS)))
            for key, (model, response) in calls.items():
                self._write(
                    "INSERT OR IGNORE INTO calls (key, model, response_json) VALUES (?, ?, ?)",
                    (key, model, response.model_dump_json()),
                )
        self._write_portable()

    def _write_portable(self) -> None:
        calls = [(k, m, r) for k, (m, r) in self._call_rows().items()]
        portable.write_all(self.directory, self.run(), self.results(), calls)

    def _sync_rows(self, run: RunRecord, *, skip: Collection[str] = ()) -> None:
        """Record rows ``run`` has and the database does not (a run extended with new rows), and settings
        a stored row had none of; rows in ``skip`` keep their stored record until :meth:`_redo` drops
        their results (so a kill in between cannot leave new settings over old results)."""
        held = {r.name: r for r in self.rows()}
        rows = [held[r.name] if r.name in skip and r.name in held else r for r in run.config.rows]
        kept = run.model_copy(update={"config": run.config.model_copy(update={"rows": rows})})
        if kept.config != self.run().config:
            with self._transaction():
                self._save_rows(kept)

    def _save_rows(self, run: RunRecord) -> None:
        """Write ``run``'s configuration and its rows: new ones after the held, changed ones in place (call
        inside a transaction)."""
        held = {r.name: r for r in self.rows()}
        self._write(
            "UPDATE run SET config_json = ?, identity_json = ? WHERE id = 1",
            (run.config.model_dump_json(), run.config.identity_json()),
        )
        added = [r for r in run.config.rows if r.name not in held]
        for i, row in enumerate(added, start=len(held)):
            self._write("INSERT INTO rows VALUES (?, ?, ?)", (row.name, i, row.model_dump_json()))
        for row in run.config.rows:
            if row.name in held and row != held[row.name]:
                self._write("UPDATE rows SET spec_json = ? WHERE name = ?", (row.model_dump_json(), row.name))

    def _redo(self, run: RunRecord, names: Collection[str]) -> int:
        """Drop the stored results of the rows ``names`` and record their settings from ``run``; returns how
        many results were dropped. The portable files are rewritten first: a kill in between leaves the
        database with the old settings and results, which the next resume refuses without --redo."""
        names = [n for n in names if n in {r.name for r in self.rows()}]
        if not names:
            return 0
        kept = [r for r in self.results() if r.row not in names]
        calls = [(k, m, r) for k, (m, r) in self._call_rows().items()]
        portable.write_all(self.directory, run, kept, calls)
        marks = ", ".join("?" for _ in names)
        with self._transaction():
            dropped = self._write(f"DELETE FROM results WHERE row IN ({marks})", names)
            self._save_rows(run)
        return dropped

    def save_call(self, key: str, model: str, response: ModelResponse) -> None:
        """Keep one computed model call of ``model`` (a spec), committed at once; a key already kept is
        left as it is."""
        try:
            with self._transaction():
                added = self._write(
                    "INSERT OR IGNORE INTO calls (key, model, response_json) VALUES (?, ?, ?)",
                    (key, model, response.model_dump_json()),
                )
        except sqlite3.Error as e:
            raise ResultsStoreError(f"cannot store a model call in {self.directory}: {e}") from None
        if added:
            self._append_portable(portable.CALLS_JSONL, portable.call_line(key, model, response))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
