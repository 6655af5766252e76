"""The results database's layout, and moving records in and out of its rows.

Layout of ``DIR/results.sqlite``:

- ``run``: one row, the run's configuration, problem digest and package versions;
- ``problems``: the selected problems (id, order, difficulty, platform, release date, entry point);
- ``rows``: the strategy rows;
- ``results``: one row per (problem, row), ``UNIQUE`` — written and committed the moment it finishes;
- ``sessions``: one row per ``memdoor bench`` invocation (time, versions, command line);
- ``calls``: every model call the run computed, by request key (see :mod:`memdoor.bench.draws`), so a
  resumed run replays them instead of computing them again.

The database only ever appears complete: :func:`build` makes it under a temporary name and renames it
into place. Readers open it with :func:`connect_readonly`, which creates and changes nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.core.errors import ResultsStoreError

DB_NAME = "results.sqlite"
LOCK_NAME = ".bench.lock"
SCHEMA_VERSION = 1

SCHEMA = (
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

CALLS_TABLE = SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS calls") :]
"""The calls table alone (added to a directory made before it existed, on resume)."""
ADDED_COLUMNS = (("compute", "REAL"), ("drafts", "TEXT"), ("signals", "TEXT"))
"""Result columns added since schema 1 was first written (a directory made before them lacks them)."""

COLUMNS = list(ResultRecord.model_fields)
"""The results table's columns, in the record's field order."""
SLIM_COLUMNS = [c for c in COLUMNS if not c.endswith("_json")]
"""The columns but the JSON blobs (trace, solution, ledger, verdict)."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def connect_readonly(path: Path) -> sqlite3.Connection:
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


def connect_writer(path: Path) -> sqlite3.Connection:
    """Open an existing database for writing (WAL, synchronous commits), adding what a directory made by
    an older memdoor lacks: the calls table and the :data:`ADDED_COLUMNS`."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.executescript(CALLS_TABLE)
    present = result_columns(conn)
    for column, kind in ADDED_COLUMNS:
        if column not in present:
            conn.execute(f"ALTER TABLE results ADD COLUMN {column} {kind}")
    return conn


def result_columns(conn: sqlite3.Connection) -> set[str]:
    """Columns of the results table (older directories lack the newer ones)."""
    return {r[1] for r in conn.execute("PRAGMA table_info(results)")}


def record_to_row(result: ResultRecord, exclude: set[str] | None = None) -> dict:
    """The result as SQL parameters (flags as 0/1), the inverse of :func:`row_to_record`."""
    values = result.model_dump(exclude=exclude)
    values["passed"] = int(values["passed"])
    values["retryable"] = int(values["retryable"])
    if values["oracle"] is not None:
        values["oracle"] = int(values["oracle"])
    return values


def row_to_record(row: sqlite3.Row) -> ResultRecord:
    data = dict(row)
    data["passed"] = bool(data["passed"])
    data["oracle"] = None if data["oracle"] is None else bool(data["oracle"])
    data["retryable"] = bool(data["retryable"])
    return ResultRecord.model_validate(data)


def read_run(conn: sqlite3.Connection, path: Path) -> RunRecord:
    """The run record of the database at ``path`` (ResultsStoreError: another schema, or none)."""
    schema = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if schema is None or schema[0] != str(SCHEMA_VERSION):
        found = "none" if schema is None else schema[0]
        raise ResultsStoreError(f"{path}: results schema {found}, this memdoor reads schema {SCHEMA_VERSION}")
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


def build(path: Path, run: RunRecord, problems: Sequence[ProblemInfo]) -> None:
    """Create the database complete under a temporary name, then rename it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        conn.executescript(SCHEMA)
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
