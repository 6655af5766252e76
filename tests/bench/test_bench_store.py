"""The SQLite results store: one result per (problem, row), resume, refusal of another configuration."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from memdoor.bench import portable
from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.store import DB_NAME, ResultsStore
from memdoor.core.errors import ResultsStoreError
from memdoor.core.messages import Completion, ModelResponse, Usage

PROBLEMS = [ProblemInfo(id=f"p{i}", position=i, difficulty="easy") for i in range(3)]


def run_record(
    strategies: str = "single,parallel:2", seed: int = 0, digest: str = "d1", model: str = "scripted:x.json"
) -> RunRecord:
    config = BenchConfig(suite="suite.jsonl", rows=parse_rows(strategies, [model], []), seed=seed)
    return RunRecord(config=config, problems_sha256=digest, problem_count=3, versions={"memdoor": "t"})


def result(pid: str, row: str, *, passed: bool = True, status: str = "done", **kw) -> ResultRecord:
    kw.setdefault("code", f"# {pid} {row}")
    return ResultRecord(
        problem_id=pid, row=row, status=status, passed=passed, trace_id=f"t-{pid}-{row}", **kw
    )


def snapshot(directory: Path) -> dict[str, str]:
    """Every file in ``directory`` with its content hash (to show nothing changed)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()
    }


def test_results_are_committed_one_by_one_and_read_back_in_order(tmp_path):
    with ResultsStore.create_or_resume(tmp_path / "out", run_record(), PROBLEMS, argv=["bench"]) as store:
        store.record(result("p1", "parallel:2", passed=False, oracle=True))
        store.record(result("p0", "single", prompt_tokens=10, completion_tokens=5, usd=None))
        # Visible to another connection at once (committed), while the writer is still open.
        other = sqlite3.connect(f"file:{tmp_path / 'out' / DB_NAME}?mode=ro", uri=True)
        assert other.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2
        other.close()
    with ResultsStore.open(tmp_path / "out") as store:
        got = store.results()
        assert [(r.problem_id, r.row) for r in got] == [("p0", "single"), ("p1", "parallel:2")]
        assert got[0].tokens == 15 and got[0].passed and got[1].oracle is True and not got[1].passed
        assert [r.name for r in store.rows()] == ["single", "parallel:2"]
        assert [p.id for p in store.problems()] == ["p0", "p1", "p2"]
        assert store.run().config.seed == 0
        assert len(store.sessions()) == 1


def test_a_finished_pair_is_never_overwritten_and_an_error_is_replaced_by_its_retry(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        assert store.record(result("p0", "single", passed=True))
        assert not store.record(result("p0", "single", passed=False, code="other"))
        assert store.record(result("p1", "single", status="error", passed=False, error="ModelUnavailable: x"))
        assert store.record(result("p1", "single", passed=True))
        stored = store.statuses()
    assert stored[("p0", "single")].passed and stored[("p0", "single")].code == "# p0 single"
    assert stored[("p1", "single")].status == "done" and stored[("p1", "single")].attempts == 2
    db = sqlite3.connect(tmp_path / DB_NAME)
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2
    with pytest.raises(sqlite3.IntegrityError):  # the UNIQUE constraint itself
        db.execute("INSERT INTO results SELECT * FROM results LIMIT 1")


def test_resuming_the_same_run_keeps_everything_and_counts_sessions(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single"))
    # Same identity: the suite path and versions may differ.
    again = run_record()
    again.config.suite = "/another/path/suite.jsonl"
    again.versions = {"memdoor": "newer"}
    with ResultsStore.create_or_resume(tmp_path, again, PROBLEMS) as store:
        assert list(store.statuses()) == [("p0", "single")]
        assert len(store.sessions()) == 2
        assert store.run().versions == {"memdoor": "t"}  # the run keeps the versions it was created with


@pytest.mark.parametrize(
    ("other", "named"),
    [
        (run_record(model="scripted:y.json"), "rows"),
        (run_record(seed=7), "seed"),
        (run_record(digest="d2"), "problems"),
    ],
)
def test_another_configuration_is_refused_and_nothing_changes(tmp_path, other, named):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single"))
    before = snapshot(tmp_path)
    with pytest.raises(ResultsStoreError, match=named) as info:
        ResultsStore.create_or_resume(tmp_path, other, PROBLEMS)
    assert "\n" not in str(info.value)
    assert snapshot(tmp_path) == before


def test_readers_create_no_file(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single"))
    before = snapshot(tmp_path)
    assert ResultsStore.inspect(tmp_path).config.seed == 0
    with ResultsStore.open(tmp_path) as store:
        assert len(store.results()) == 1
    assert snapshot(tmp_path) == before
    assert ResultsStore.inspect(tmp_path / "missing") is None
    assert not (tmp_path / "missing").exists()


def test_a_second_writer_is_refused_while_the_first_holds_the_directory(tmp_path):
    with (
        ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS),
        pytest.raises(ResultsStoreError, match="in use"),
    ):
        ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS)
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS):
        pass  # released on close


def test_a_file_that_is_not_a_results_database_is_a_clear_error(tmp_path):
    (tmp_path / DB_NAME).write_text("not sqlite")
    with pytest.raises(ResultsStoreError, match="not a memdoor results database"):
        ResultsStore.inspect(tmp_path)
    with pytest.raises(ResultsStoreError, match="no bench results"):
        ResultsStore.open(tmp_path / "nothing")
    assert sorted(os.listdir(tmp_path)) == [DB_NAME]


def test_a_database_of_another_schema_version_is_refused(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS):
        pass
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(ResultsStoreError, match="schema 99"):
        ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS)


def test_a_directory_made_before_calls_compute_and_drafts_were_kept_is_read_and_resumed(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single", compute=5.0))
    conn = sqlite3.connect(tmp_path / DB_NAME)  # back to the first schema
    conn.execute("DROP TABLE calls")
    conn.execute("ALTER TABLE results DROP COLUMN compute")
    conn.execute("ALTER TABLE results DROP COLUMN drafts")
    conn.commit()
    conn.close()
    with ResultsStore.open(tmp_path) as store:
        assert [r.compute for r in store.results()] == [None] and store.calls() == {}
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p1", "single", compute=7.0, drafts="[]"))
        assert [(r.compute, r.drafts) for r in store.results()] == [(None, None), (7.0, "[]")]


def test_a_run_is_extended_with_new_rows_and_may_leave_rows_out(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single"))
        store.save_call("k1", "scripted:x.json", _response("draft"))
    with ResultsStore.create_or_resume(tmp_path, run_record("single,parallel:2,hybrid:2"), PROBLEMS) as store:
        assert [r.name for r in store.rows()] == ["single", "parallel:2", "hybrid:2"]
        assert [r.name for r in store.run().config.rows] == ["single", "parallel:2", "hybrid:2"]
        assert list(store.statuses()) == [("p0", "single")] and list(store.calls()) == ["k1"]
        store.record(result("p0", "hybrid:2"))
    doc = json.loads((tmp_path / "run.json").read_text())
    assert [r["name"] for r in doc["config"]["rows"]] == ["single", "parallel:2", "hybrid:2"]
    # Only some rows this time: the others and their results stay.
    with ResultsStore.create_or_resume(tmp_path, run_record("hybrid:2"), PROBLEMS) as store:
        assert [r.name for r in store.rows()] == ["single", "parallel:2", "hybrid:2"]
        assert set(store.statuses()) == {("p0", "single"), ("p0", "hybrid:2")}
    # A directory holding only the portable files is rebuilt with every row and extended further.
    for p in tmp_path.iterdir():
        if p.name.startswith("results.sqlite"):
            p.unlink()
    with ResultsStore.create_or_resume(tmp_path, run_record("single,shared:2"), PROBLEMS) as store:
        assert [r.name for r in store.rows()] == ["single", "parallel:2", "hybrid:2", "shared:2"]
        assert set(store.statuses()) == {("p0", "single"), ("p0", "hybrid:2")}


def _response(text: str) -> ModelResponse:
    return ModelResponse(model="scripted:x.json", completions=[Completion(text=text)], usage=Usage())


def test_rows_another_machine_added_come_with_its_portable_files(tmp_path):
    """Machine B's database predates row hybrid:2, which machine A added and committed in run.json and
    results.jsonl: B's resume takes the row and its results in, and writes them back out."""
    a, b = tmp_path / "a", tmp_path / "b"
    with ResultsStore.create_or_resume(a, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single"))
    shutil.copytree(a, b)  # B: the same run before the extension
    with ResultsStore.create_or_resume(a, run_record("single,parallel:2,hybrid:2"), PROBLEMS) as store:
        store.record(result("p0", "hybrid:2"))
    for name in ("run.json", "results.jsonl"):  # A's committed files reach B's checkout
        (b / name).write_bytes((a / name).read_bytes())
    with ResultsStore.create_or_resume(b, run_record(), PROBLEMS, argv=["bench"]) as store:
        assert [r.name for r in store.rows()] == ["single", "parallel:2", "hybrid:2"]
        assert set(store.statuses()) == {("p0", "single"), ("p0", "hybrid:2")}
    doc = json.loads((b / "run.json").read_text())
    assert [r["name"] for r in doc["config"]["rows"]] == ["single", "parallel:2", "hybrid:2"]


def test_each_session_records_its_own_versions(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS):
        pass
    newer = run_record().model_copy(update={"versions": {"memdoor": "newer"}})
    with ResultsStore.create_or_resume(tmp_path, newer, PROBLEMS) as store:
        sessions = store.sessions()
        assert store.run().versions == {"memdoor": "t"}  # the run keeps what it was made with
    assert [json.loads(s["versions_json"]) for s in sessions] == [{"memdoor": "t"}, {"memdoor": "newer"}]


def with_settings(run: RunRecord, **settings: dict) -> RunRecord:
    """``run`` with the settings given per row name (rows not named keep theirs)."""
    rows = [r.model_copy(update={"settings": settings.get(r.name, r.settings)}) for r in run.config.rows]
    return run.model_copy(update={"config": run.config.model_copy(update={"rows": rows})})


OLD = {"options": {"refine": "all", "rounds": 2}, "selector": "vote"}
NEW = {"options": {"refine": "failing", "rounds": 2}, "selector": "vote"}


def test_a_row_whose_settings_changed_is_refused_until_it_is_redone(tmp_path):
    """A strategy default changed between two sittings would mix two rules in one row: refused with one
    line naming the setting, and --redo drops that row's results (only those) and records the new ones."""
    first = with_settings(run_record(), single=OLD, **{"parallel:2": OLD})
    with ResultsStore.create_or_resume(tmp_path, first, PROBLEMS) as store:
        store.record(result("p0", "single"))
        store.record(result("p0", "parallel:2"))
        store.record(result("p1", "parallel:2"))
        store.save_call("k1", "scripted:x.json", _response("draft"))
    before = snapshot(tmp_path)
    changed = with_settings(run_record(), single=OLD, **{"parallel:2": NEW})
    with pytest.raises(ResultsStoreError) as e:
        ResultsStore.create_or_resume(tmp_path, changed, PROBLEMS)
    message = str(e.value)
    assert "\n" not in message and "parallel:2" in message and "--redo parallel:2" in message
    assert "options.refine: 'all' → 'failing'" in message
    assert snapshot(tmp_path) == before
    with ResultsStore.create_or_resume(tmp_path, changed, PROBLEMS, redo=["parallel:2"]) as store:
        assert store.dropped == 2
        assert list(store.statuses()) == [("p0", "single")] and list(store.calls()) == ["k1"]
        assert {r.name: r.settings for r in store.rows()} == {"single": OLD, "parallel:2": NEW}
        store.record(result("p0", "parallel:2", code="# redone"))
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted((r["problem_id"], r["row"], r["code"]) for r in lines) == [
        ("p0", "parallel:2", "# redone"),
        ("p0", "single", "# p0 single"),
    ]
    doc = json.loads((tmp_path / "run.json").read_text())
    assert {r["name"]: r["settings"] for r in doc["config"]["rows"]}["parallel:2"] == NEW
    # The same command resumes now; the old settings are the ones refused.
    with ResultsStore.create_or_resume(tmp_path, changed, PROBLEMS) as store:
        assert store.dropped == 0 and len(store.statuses()) == 2
    with pytest.raises(ResultsStoreError, match="--redo parallel:2"):
        ResultsStore.create_or_resume(tmp_path, first, PROBLEMS)


def test_a_directory_made_before_settings_were_recorded_takes_them_on_resume(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_record(), PROBLEMS) as store:
        store.record(result("p0", "single"))
    with ResultsStore.create_or_resume(tmp_path, with_settings(run_record(), single=NEW), PROBLEMS) as store:
        assert store.rows()[0].settings == NEW and len(store.statuses()) == 1
    with pytest.raises(ResultsStoreError, match="--redo single"):
        ResultsStore.create_or_resume(tmp_path, with_settings(run_record(), single=OLD), PROBLEMS)


@pytest.mark.parametrize("kill_at", ["portable files", "database"])
def test_a_redo_killed_before_the_database_changed_is_refused_then_finished(tmp_path, monkeypatch, kill_at):
    """The portable files are rewritten first; a kill before the database's transaction leaves the old
    settings and results there, which a resume without --redo refuses (never mixes) — also when the same
    command adds a row (whose record is written before the redo)."""
    first = with_settings(run_record("single"), single=OLD)
    with ResultsStore.create_or_resume(tmp_path, first, PROBLEMS) as store:
        store.record(result("p0", "single"))
    changed = with_settings(run_record("single,parallel:2"), single=NEW)
    real_write, real_files = ResultsStore._write, portable.write_all
    rewrites = []

    def killed_write(self, sql, params):
        if sql.startswith("DELETE FROM results"):
            raise KeyboardInterrupt  # stands for the kill: nothing of the transaction is committed
        return real_write(self, sql, params)

    def killed_files(directory, run, results, calls):
        rewrites.append(run)
        if len(rewrites) == 2:  # the first rewrite is the resume's own, the second the redo's
            raise KeyboardInterrupt
        return real_files(directory, run, results, calls)

    if kill_at == "database":
        monkeypatch.setattr(ResultsStore, "_write", killed_write)
    else:
        monkeypatch.setattr(portable, "write_all", killed_files)
    with pytest.raises(KeyboardInterrupt):
        ResultsStore.create_or_resume(tmp_path, changed, PROBLEMS, redo=["single"])
    monkeypatch.undo()
    with pytest.raises(ResultsStoreError, match="--redo single"):
        ResultsStore.create_or_resume(tmp_path, changed, PROBLEMS)
    with ResultsStore.create_or_resume(tmp_path, changed, PROBLEMS, redo=["single"]) as store:
        assert store.dropped == 1 and store.statuses() == {}
