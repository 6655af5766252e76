"""``memdoor report`` on a committed run, as a fresh checkout holds it (portable files, no database):
the database is rebuilt from the files and the suite, and the report gives the committed results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench_helpers import PROBLEMS_YAML, run_cli

from memdoor.bench.portable import CALLS_JSONL, RESULTS_JSONL, RUN_JSON
from memdoor.bench.store import DB_NAME, ResultsStore
from memdoor.core.errors import ResultsStoreError

COMMITTED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "humaneval-ranked"


def test_a_committed_run_reports_from_its_portable_files(tmp_path):
    if not (COMMITTED / RESULTS_JSONL).is_file():
        pytest.skip("the committed run is not in this checkout")
    run = tmp_path / "run"
    run.mkdir()
    for name in (RUN_JSON, RESULTS_JSONL, CALLS_JSONL):
        shutil.copy(COMMITTED / name, run / name)
    done = run_cli("report", run, "--json", "--resamples", "200")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    expected: dict[str, list[int]] = {}
    for line in (COMMITTED / RESULTS_JSONL).read_text().splitlines():
        rec = json.loads(line)
        expected.setdefault(rec["row"], [0, 0])
        expected[rec["row"]][0] += bool(rec["passed"])
        expected[rec["row"]][1] += 1
    assert {k: [v["solved"], v["total"]] for k, v in doc["strategies"].items()} == expected
    for name in (RUN_JSON, RESULTS_JSONL, CALLS_JSONL):  # the committed files are left as they were
        assert (run / name).read_bytes() == (COMMITTED / name).read_bytes(), name


def test_a_directory_with_neither_database_nor_portable_files_is_one_line(tmp_path):
    done = run_cli("report", tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no bench results here" in done.stderr


def test_a_suite_that_no_longer_gives_the_run_s_problems_is_refused_on_one_line(tmp_path, answers):
    """A suite named relative to the cwd (as LeetCode runs name theirs): another file of that name there
    must not be used silently to rebuild the run."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    for d in (here, elsewhere):
        d.mkdir()
    (here / "problems.yaml").write_text(PROBLEMS_YAML)
    (elsewhere / "problems.yaml").write_text(PROBLEMS_YAML.replace("Return a + b.", "Return the sum."))
    spec = f"scripted:{answers}"
    done = run_cli(
        "bench", "problems.yaml", "--model", spec, "--strategies", "single", "--out", "run", cwd=here
    )
    assert done.returncode == 0, done.stderr
    shutil.copytree(here / "run", elsewhere / "run")
    for d in (here, elsewhere):
        for f in (d / "run").glob(DB_NAME + "*"):
            f.unlink()
    moved = run_cli("report", "run", "--resamples", "100", cwd=elsewhere)
    assert moved.returncode == 2 and "Traceback" not in moved.stderr, moved.stderr
    assert len(moved.stderr.strip().splitlines()) == 1 and "digest differs" in moved.stderr
    assert not (elsewhere / "run" / DB_NAME).exists()  # nothing rebuilt from the wrong problems
    same = run_cli("report", "run", "--resamples", "100", cwd=here)  # where the suite is: rebuilt
    assert same.returncode == 0, same.stderr


def test_opening_a_committed_run_without_its_database_names_the_command_that_rebuilds_it(tmp_path):
    (tmp_path / RESULTS_JSONL).write_text("")
    with pytest.raises(ResultsStoreError) as e:
        ResultsStore.open(tmp_path)
    assert f"memdoor report {tmp_path} rebuilds the database" in str(e.value)
