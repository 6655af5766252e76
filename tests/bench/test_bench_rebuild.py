"""``memdoor report`` on a committed run, as a fresh checkout holds it (portable files, no database):
the database is rebuilt from the files and the suite, and the report gives the committed results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench_helpers import run_cli

from memdoor.bench.portable import CALLS_JSONL, RESULTS_JSONL, RUN_JSON

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
