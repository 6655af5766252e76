"""The results store: one SQLite database per results directory (WAL, committed per result).

Layout of ``DIR/results.sqlite``:

- ``run``: one row, the run's configuration, problem digest and package versions;
- ``problems``: the selected problems (id, order, difficulty, platform, release date, entry point);
- ``rows``: the strategy rows;
- ``results``: one row per (problem, row), ``UNIQUE`` — written and committed the moment it finishes;
- ``sessions``: one row per ``memdoor bench`` invocation (time, versions, command line);
- ``calls``: every model call the run computed, by request key (see :mod:`memdoor.bench.draws`), so a
  resumed run replays them instead of computing them again.

Beside it the writer keeps the portable files (:mod:`memdoor.bench.portable`: ``run.json``,
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
from datetime import UTC, datetime
from pathlib import Path

from memdoor.bench import portable
from memdoor.bench.config import RowSpec
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.revision import adopt, check_rules
from memdoor.core.errors import ResultsStoreError
from memdoor.core.messages import ModelResponse

DB_NAME = "results.sqlite"
LOCK_NAME = ".bench.lock"
SCHEMA_VERSION = 1

_SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE run (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  config_json TEXT NOT NULL,
  identity_json TEXT NOT NULL,
  problems_sha256 TEXT NOT NULL,
  problem_count INTEGER NOT NULL,
  versions_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE problems (
  id TEXT PRIMARY KEY,
  position INTEGER NOT NULL UNIQUE,
  info_json TEXT NOT NULL
);
CREATE TABLE rows (
  name TEXT PRIMARY KEY,
  position INTEGER NOT NULL UNIQUE,
  spec_json TEXT NOT NULL
);
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL,
  argv_json TEXT NOT NULL,
  versions_json TEXT NOT NULL
);
CREATE TABLE results (
  problem_id TEXT NOT NULL REFERENCES problems(id),
  row TEXT NOT NULL REFERENCES rows(name),
  status TEXT NOT NULL CHECK (status IN ('done', 'error')),
  passed INTEGER NOT NULL,
  oracle INTEGER,
  code TEXT NOT NULL,
  verdict_status TEXT,
  tests_passed INTEGER,
  tests_total INTEGER,
  candidates INTEGER NOT NULL,
  confidence REAL,
  stopped TEXT,
  calls INTEGER NOT NULL,
  failed_calls INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  usd REAL,
  compute REAL,
  model_seconds REAL NOT NULL,
  wall_seconds REAL NOT NULL,
  strategy_seconds REAL NOT NULL,
  trace_id TEXT NOT NULL,
  trace_path TEXT,
  error TEXT,
  error_type TEXT,
  retryable INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  drafts TEXT,
  signals TEXT,
  verdict_json TEXT,
  ledger_json TEXT,
  trace_json TEXT,
  solution_json TEXT,
  UNIQUE (problem_id, row)
);
"""
    + """
CREATE TABLE IF NOT EXISTS calls (
  key TEXT PRIMARY KEY,
  model TEXT NOT NULL,
  response_json TEXT NOT NULL
);
"""
)

_CALLS = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS calls") :]
"""The calls table alone (added to a directory made before it existed, on resume)."""

_COLUMNS = list(ResultRecord.model_fields)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """Open without creating anything: ``immutable`` when no WAL file exists (a cleanly closed
    database), plain read-only otherwise (a live or killed writer's WAL must be read)."""
    wal = path.with_name(path.name + "-wal")
    mode = "ro" if wal.exists() else "ro&immutable=1"
    try:
        conn = sqlite3.connect(f"file:{path}?mode={mode}", uri=True, timeout=30)
        conn.execute("SELECT 1 FROM run").fetchall()
        conn.execute("SELECT 1 FROM meta").fetchall()
    except sqlite3.Error as e:
        raise ResultsStoreError(f"{path}: not a memdoor results database ({e})") from None
    return conn


def _columns(conn: sqlite3.Connection) -> set[str]:
    """Columns of the results table (older directories lack the newer ones)."""
    return {r[1] for r in conn.execute("PRAGMA table_info(results)")}


def _record_to_row(result: ResultRecord, exclude: set[str] | None = None) -> dict:
    """The result as SQL parameters (flags as 0/1), the inverse of :func:`_row_to_record`."""
    values = result.model_dump(exclude=exclude)
    values["passed"] = int(values["passed"])
    values["retryable"] = int(values["retryable"])
    if values["oracle"] is not None:
        values["oracle"] = int(values["oracle"])
    return values


def _row_to_record(row: sqlite3.Row) -> ResultRecord:
    data = dict(row)
    data["passed"] = bool(data["passed"])
    data["oracle"] = None if data["oracle"] is None else bool(data["oracle"])
    data["retryable"] = bool(data["retryable"])
    return ResultRecord.model_validate(data)


class ResultsStore:
    """A results directory's database. Open with :meth:`create_or_resume` (writer) or :meth:`open` (reader)."""

    def __init__(self, directory: Path, conn: sqlite3.Connection, lock_fd: int | None):
        self.directory = directory
        self._conn = conn
        self._conn.row_factory = sqlite3.Row
        self._lock_fd = lock_fd
        self.dropped = 0
        """Results dropped when the writer opened (rows named in ``redo``)."""

    # -- opening ---------------------------------------------------------------------------------

    @staticmethod
    def db_path(directory: str | os.PathLike) -> Path:
        return Path(directory) / DB_NAME

    @classmethod
    def inspect(cls, directory: str | os.PathLike) -> RunRecord | None:
        """The run a directory holds, or None when it holds no results database. Touches nothing."""
        if Path(directory).exists() and not Path(directory).is_dir():
            raise ResultsStoreError(f"{directory} is not a directory")
        path = cls.db_path(directory)
        if not path.exists():  # a directory holding only the portable files (another machine's run)
            return portable.read_run(Path(directory))
        conn = _connect_readonly(path)
        try:
            return cls._read_run(conn, path)
        finally:
            conn.close()

    @staticmethod
    def _read_run(conn: sqlite3.Connection, path: Path) -> RunRecord:
        schema = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if schema is None or schema[0] != str(SCHEMA_VERSION):
            found = "none" if schema is None else schema[0]
            raise ResultsStoreError(
                f"{path}: results schema {found}, this memdoor reads schema {SCHEMA_VERSION}"
            )
        row = conn.execute(
            "SELECT config_json, problems_sha256, problem_count, versions_json, created_at FROM run"
        ).fetchone()
        if row is None:
            raise ResultsStoreError(f"{path}: results database has no run record")
        try:
            return RunRecord.model_validate(
                {
                    "config": json.loads(row[0]),
                    "problems_sha256": row[1],
                    "problem_count": row[2],
                    "versions": json.loads(row[3]),
                    "created_at": row[4],
                }
            )
        except ValueError as e:
            raise ResultsStoreError(f"{path}: unreadable run record ({e})") from None

    @staticmethod
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

    @classmethod
    def open(cls, directory: str | os.PathLike) -> ResultsStore:
        """Open an existing results directory read-only (reports, exports)."""
        path = cls.db_path(directory)
        if not path.exists():
            hint = ""
            if (Path(directory) / portable.RESULTS_JSONL).is_file():
                hint = f"; it holds {portable.RESULTS_JSONL}: memdoor report {directory} rebuilds the database from it"
            raise ResultsStoreError(f"{directory}: no bench results here ({DB_NAME} not found{hint})")
        return cls(Path(directory), _connect_readonly(path), None)

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
            run = cls.check_compatible(stored, run, directory, redo=redo, accept=accept)
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
                cls._build(path, run, problems)
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_CALLS)
            present = _columns(conn)  # a directory made before these were recorded
            for column, kind in (("compute", "REAL"), ("drafts", "TEXT"), ("signals", "TEXT")):
                if column not in present:
                    conn.execute(f"ALTER TABLE results ADD COLUMN {column} {kind}")
            store = cls(directory, conn, lock_fd)
            merged = cls._read_run(conn, path)
            shipped = portable.read_run(directory)  # rows another machine added travel in run.json
            for other in (shipped, run) if shipped is not None else (run,):
                merged = cls.check_compatible(merged, other, directory, redo=redo, accept=accept)
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

    @staticmethod
    def _build(path: Path, run: RunRecord, problems: Sequence[ProblemInfo]) -> None:
        """Create the database complete under a temporary name, then rename it into place."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(_SCHEMA)
            conn.execute("BEGIN")
            conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            conn.execute(
                "INSERT INTO run VALUES (1, ?, ?, ?, ?, ?, ?)",
                (
                    run.config.model_dump_json(),
                    run.config.identity_json(),
                    run.problems_sha256,
                    run.problem_count,
                    json.dumps(run.versions, sort_keys=True),
                    run.created_at or now_iso(),
                ),
            )
            conn.executemany(
                "INSERT INTO problems VALUES (?, ?, ?)",
                [(p.id, p.position, p.model_dump_json()) for p in problems],
            )
            conn.executemany(
                "INSERT INTO rows VALUES (?, ?, ?)",
                [(r.name, i, r.model_dump_json()) for i, r in enumerate(run.config.rows)],
            )
            conn.execute("COMMIT")
        finally:
            conn.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)

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
        values = _record_to_row(result)
        cols = ", ".join(_COLUMNS)
        marks = ", ".join(f":{c}" for c in _COLUMNS)
        updates = ", ".join(
            f"{c} = excluded.{c}" for c in _COLUMNS if c not in ("problem_id", "row", "attempts")
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
        cols = [c for c in _COLUMNS if not c.endswith("_json")]
        row = self._conn.execute(
            f"SELECT {', '.join(cols)} FROM results WHERE problem_id = ? AND row = ?",
            (result.problem_id, result.row),
        ).fetchone()
        return _row_to_record(row)

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
        cols = [c for c in _COLUMNS if not c.endswith("_json")]
        sql = (
            f"INSERT INTO results ({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)}) "
            f"ON CONFLICT (problem_id, row) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in cols)} "
            "WHERE results.status = 'error' AND excluded.status = 'done'"
        )
        with self._transaction():
            for r in results.values():
                self._write(sql, _record_to_row(r, exclude={c for c in _COLUMNS if c.endswith("_json")}))
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

    # -- reading ---------------------------------------------------------------------------------

    def run(self) -> RunRecord:
        return self._read_run(self._conn, self.db_path(self.directory))

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
        present = _columns(self._conn)
        cols = [c for c in _COLUMNS if c in present and (full or not c.endswith("_json"))]
        sql = (
            f"SELECT {', '.join('r.' + c for c in cols)} FROM results r "
            "JOIN problems p ON p.id = r.problem_id JOIN rows w ON w.name = r.row "
            "ORDER BY p.position, w.position"
        )
        return [_row_to_record(r) for r in self._conn.execute(sql)]

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
