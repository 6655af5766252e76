"""Runs that outlive a machine: a bench killed with SIGKILL is continued elsewhere from its portable
files alone (run.json, results.jsonl, calls.jsonl) — the real CLI in a subprocess, scripted model."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from bench_helpers import ALL_FUNCTIONS, answers_file, kill_once_stored, run_cli

from memdoor.bench.portable import CALLS_JSONL, GITIGNORE, RESULTS_JSONL, RUN_JSON

PROBLEMS = ("add", "mul", "neg", "sub", "square", "double")
ROWS = ("single", "parallel:2")


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def test_a_killed_run_continues_on_another_machine_from_its_portable_files(tmp_path, problem_file):
    slow = answers_file(tmp_path, [ALL_FUNCTIONS], delay=0.4, name="slow.json")
    out = tmp_path / "machine-a"
    args = ["bench", str(problem_file), "--strategies", ",".join(ROWS), "--model", f"scripted:{slow}"]
    cmd = [sys.executable, "-m", "memdoor", *args, "--out", str(out)]
    kill_once_stored(cmd, lambda: len(lines(out / RESULTS_JSONL)))
    before = {(r["problem_id"], r["row"]): r for r in lines(out / RESULTS_JSONL)}
    assert 3 <= len(before) < len(PROBLEMS) * len(ROWS), "the run must have been killed mid-way"
    calls_before = {c["key"] for c in lines(out / CALLS_JSONL)}

    # Another machine gets only what git would carry: the portable files.
    other = tmp_path / "machine-b"
    other.mkdir()
    for name in (RUN_JSON, RESULTS_JSONL, CALLS_JSONL):
        shutil.copy(out / name, other / name)
    # A report on the portable files alone rebuilds the database from them (no model, nothing recomputed)
    # and covers what was stored; the bench then resumes from that database.
    early = run_cli("report", other, "--json", "--resamples", "200")
    assert early.returncode == 0, early.stderr
    doc = json.loads(early.stdout)
    common = [p for p in PROBLEMS if all((p, row) in before for row in ROWS)]  # an unfinished run's report
    for row in ROWS:
        assert doc["strategies"][row]["total"] == len(common)
        assert doc["strategies"][row]["solved"] == sum(before[(p, row)]["passed"] for p in common)
    resumed = run_cli(*args, "--out", other)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} already stored" in resumed.stdout
    ran = [line for line in resumed.stderr.splitlines() if line.startswith("[")]
    assert len(ran) == len(PROBLEMS) * len(ROWS) - len(before)  # only the missing pairs ran

    after = lines(other / RESULTS_JSONL)
    pairs = [(r["problem_id"], r["row"]) for r in after]
    assert pairs == sorted((p, row) for p in PROBLEMS for row in ROWS)  # every pair once, sorted
    for r in after:
        if (r["problem_id"], r["row"]) in before:
            assert r == before[(r["problem_id"], r["row"])]  # carried over untouched
        assert r["attempts"] == 1 and r["status"] == "done"
    calls = lines(other / CALLS_JSONL)
    keys = [c["key"] for c in calls]
    assert keys == sorted(set(keys)) and calls_before <= set(keys)
    # 2 agents' drafts per problem were computed, each once; single's draft is agent 0's, replayed
    assert len(keys) == len(PROBLEMS) * 2
    report = run_cli("report", other, "--json", "--resamples", "200")
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    assert doc["run"]["calls_made"] == len(PROBLEMS) * 2
    assert doc["run"]["calls_charged"] == len(PROBLEMS) * 3
    assert (
        doc["strategies"]["parallel:2"]["scaling"]["2"]["oracle"]
        == doc["strategies"]["parallel:2"]["oracle_rate"]
    )
    assert "results.sqlite*" in (other / GITIGNORE).read_text()

    again = run_cli(*args, "--out", other)  # nothing left to do
    assert again.returncode == 0 and "0 run" in again.stdout
    assert lines(other / RESULTS_JSONL) == after
