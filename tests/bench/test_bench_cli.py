"""``memdoor bench`` / ``report`` as a user runs them: resume after SIGKILL, bad input, JSON summary."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from bench_helpers import ALL_FUNCTIONS, EXPECTED_SOLVED, answers_file, kill_once_stored, run_cli

from memdoor.bench.store import DB_NAME, LOCK_NAME


def stored_rows(out: Path) -> list[dict]:
    db = out / DB_NAME
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            "SELECT problem_id, row, status, passed, trace_id, started_at, finished_at, code, attempts "
            "FROM results ORDER BY problem_id, row"
        ).fetchall()
        return [dict(r) for r in rows]
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def snapshot(directory: Path) -> dict[str, bytes] | None:
    if not directory.exists():
        return None
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_resume_after_sigkill_loses_nothing_and_repeats_nothing(tmp_path, problem_file):
    slow = answers_file(tmp_path, [ALL_FUNCTIONS], delay=0.4, name="slow.json")
    out = tmp_path / "out"
    cmd = [
        sys.executable, "-m", "memdoor", "bench", str(problem_file),
        "--strategies", "single,parallel:2", "--model", f"scripted:{slow}", "--out", str(out),
    ]  # fmt: skip
    kill_once_stored(cmd, lambda: len(stored_rows(out)))
    before = stored_rows(out)
    assert 3 <= len(before) < 12, "the run must have been killed mid-way"

    resumed = run_cli(*cmd[3:])
    assert resumed.returncode == 0, resumed.stderr
    after = stored_rows(out)
    pairs = [(r["problem_id"], r["row"]) for r in after]
    expected = sorted(
        (p, row) for p in ("add", "mul", "neg", "sub", "square", "double") for row in ("single", "parallel:2")
    )
    assert pairs == expected  # every pair exactly once
    by_pair = {(r["problem_id"], r["row"]): r for r in after}
    for r in before:  # earlier results untouched
        assert by_pair[(r["problem_id"], r["row"])] == r
    assert all(r["attempts"] == 1 and r["status"] == "done" for r in after)
    assert {r["problem_id"] for r in after if r["passed"]} == EXPECTED_SOLVED
    # The resumed run did only what was missing (one progress line per pair it ran).
    ran = [line for line in resumed.stderr.splitlines() if line.startswith("[")]
    assert len(ran) == 12 - len(before)
    assert f"{len(before)} already stored" in resumed.stdout

    # A third run has nothing to do, and the report covers everything.
    again = run_cli(*cmd[3:])
    assert again.returncode == 0 and "0 run" in again.stdout
    report = run_cli("report", out, "--json")
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    for name in ("single", "parallel:2"):
        assert doc["strategies"][name]["solved"] == 5 and doc["strategies"][name]["total"] == 6
    assert (out / "report.md").exists() and (out / "report.html").exists() and (out / "pareto.png").exists()


def test_report_json_prints_the_documented_summary(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    run = run_cli(
        "bench", problem_file, "--strategies", "single,sequential:2", "--model", f"scripted:{answers}",
        "--baseline", f"single@scripted:{answers}", "--budget-tokens", "5000", "--concurrency", "2",
        "--out", out,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = run_cli("report", out, "--json", "--resamples", "1000")
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    base = f"single@scripted:{answers}"
    assert list(doc["strategies"]) == ["single", "sequential:2", base]
    for entry in doc["strategies"].values():
        assert entry["solved"] == 5 and entry["total"] == 6
        assert entry["pass_at_1"] == pytest.approx(5 / 6)
        lo, hi = entry["ci95"]
        assert 0.3 < lo <= 5 / 6 <= hi <= 1.0
        assert entry["tokens_per_problem"] > 0 and entry["seconds_per_problem"] > 0
        assert entry["usd_per_problem"] is None
    assert doc["budget_tokens"] == 5000
    assert {(t["team"], t["baseline"]) for t in doc["team_vs_single"]} == {
        ("single", base),
        ("sequential:2", base),
    }
    assert "Equal budget" in (out / "report.md").read_text()
    # Every result points at its trace file, which `memdoor trace ID --dir DIR/traces` reads.
    conn = sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)
    traces = conn.execute("SELECT trace_id, trace_path, trace_json FROM results").fetchall()
    conn.close()
    assert len(traces) == 18
    for trace_id, trace_path, trace_json in traces:
        assert trace_path == f"traces/{trace_id}.json" and trace_json is None
        assert json.loads((out / trace_path).read_text())["trace"]["id"] == trace_id
    shown = run_cli("trace", traces[0][0], "--dir", out / "traces")
    assert shown.returncode == 0 and traces[0][0] in shown.stdout
    plain = run_cli("report", out, "--resamples", "1000")
    assert plain.returncode == 0 and "sequential:2" in plain.stdout and "83.3%" in plain.stdout


def _one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdoor: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--strategies", "single,bogus:3"], ["unknown strategy", "bogus"]),
        (["--strategies", "single", "--model", "nope:x"], ["bad model spec", "nope:x"]),
        (["--strategies", "single", "--model", "scripted:/nonexistent/answers.json"], ["scripted"]),
        (["--strategies", "single", "--baseline", "single"], ["--baseline"]),
        (["--strategies", "single", "--difficulty", "hard", "--since", "2030-01-01"], ["no problems left"]),
        (["--strategies", "single", "--difficulty", "impossible"], ["--difficulty"]),
        (["--strategies", "single", "--since", "2024-13-01"], ["--since"]),
        (["--strategies", "single", "--limit", "0"], ["--limit"]),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_directory(tmp_path, problem_file, answers, flags, words):
    out = tmp_path / "out"
    if "--model" not in flags:
        flags = [*flags, "--model", f"scripted:{answers}"]
    _one_line_error(run_cli("bench", problem_file, *flags, "--out", out), *words)
    assert not out.exists()


def test_a_missing_suite_is_a_clear_error(tmp_path, answers):
    out = tmp_path / "out"
    result = run_cli(
        "bench",
        tmp_path / "missing.jsonl",
        "--strategies",
        "single",
        "--model",
        f"scripted:{answers}",
        "--out",
        out,
    )
    _one_line_error(result, "missing.jsonl")
    assert not out.exists()


def test_an_out_path_that_is_a_file_is_refused_untouched(tmp_path, problem_file, answers):
    out = tmp_path / "file.txt"
    out.write_text("keep me")
    result = run_cli(
        "bench", problem_file, "--strategies", "single", "--model", f"scripted:{answers}", "--out", out
    )
    _one_line_error(result, "not a directory")
    assert out.read_text() == "keep me"


def test_a_directory_holding_another_configuration_is_refused_untouched(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out]
    assert run_cli(*base, "--strategies", "single", "--limit", "2").returncode == 0
    before = snapshot(out)
    for other in (
        ["--strategies", "single", "--limit", "3"],
        ["--strategies", "single", "--limit", "2", "--seed", "9"],
        ["--strategies", "single", "--limit", "2", "--budget-tokens", "100"],
    ):
        _one_line_error(run_cli(*base, *other), "another configuration")
        assert snapshot(out) == before
    # The same command still resumes (nothing to do) and another --concurrency is the same run.
    again = run_cli(*base, "--strategies", "single", "--limit", "2", "--concurrency", "3")
    assert again.returncode == 0, again.stderr


def test_a_run_is_extended_with_a_new_row_that_replays_the_stored_drafts(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out, "--limit", "2"]
    assert run_cli(*base, "--strategies", "single").returncode == 0
    first = {(r["problem_id"], r["row"]): r for r in stored_rows(out)}
    extended = run_cli(*base, "--strategies", "single,parallel:2")
    assert extended.returncode == 0, extended.stderr
    assert "2 already stored" in extended.stdout
    after = {(r["problem_id"], r["row"]): r for r in stored_rows(out)}
    assert sorted(after) == sorted((p, row) for p, _ in first for row in ("single", "parallel:2"))
    assert all(after[k] == v for k, v in first.items()), "the stored row is untouched"
    doc = json.loads(run_cli("report", out, "--json").stdout)
    assert set(doc["strategies"]) == {"single", "parallel:2"}
    run = doc["run"]
    # parallel:2's agent 0 makes single's request: replayed from the store, computed once.
    assert run["calls_charged"] == run["calls_made"] + 2
    # Leaving a row out runs only the rows named, and keeps the others.
    assert run_cli(*base, "--strategies", "parallel:2").returncode == 0
    assert set(json.loads(run_cli("report", out, "--json").stdout)["strategies"]) == {"single", "parallel:2"}


def test_redo_drops_a_rows_results_and_makes_them_again(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out, "--limit", "2"]
    assert run_cli(*base, "--strategies", "single,parallel:2").returncode == 0
    first = {(r["problem_id"], r["row"]): r for r in stored_rows(out)}
    doc = json.loads((out / "run.json").read_text())
    assert all(r["settings"]["options"] and r["settings"]["temperatures"] for r in doc["config"]["rows"])
    before = snapshot(out)
    _one_line_error(
        run_cli(*base, "--strategies", "single,parallel:2", "--redo", "hybrid:2"), "--redo hybrid:2"
    )
    assert snapshot(out) == before
    redone = run_cli(*base, "--strategies", "single,parallel:2", "--redo", "parallel:2")
    assert redone.returncode == 0, redone.stderr
    assert "2 stored results dropped" in redone.stderr and "2 already stored" in redone.stdout
    after = {(r["problem_id"], r["row"]): r for r in stored_rows(out)}
    assert sorted(after) == sorted(first)
    for key, row in after.items():  # single kept as it was; parallel:2 made again (new times, same answer)
        assert (row["started_at"] == first[key]["started_at"]) == (key[1] == "single")
        assert row["code"] == first[key]["code"] and row["attempts"] == 1


def test_a_directory_another_bench_is_writing_is_refused(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--strategies", "single", "--limit", "1"]
    assert run_cli(*base, "--out", out).returncode == 0
    fd = os.open(out / LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _one_line_error(run_cli(*base, "--out", out), "in use")
    finally:
        os.close(fd)


def test_report_on_a_directory_without_results_is_a_clear_error(tmp_path):
    _one_line_error(run_cli("report", tmp_path), "no bench results")
    assert list(tmp_path.iterdir()) == []


def test_a_suite_with_known_bad_problems_says_which_it_leaves_out(tmp_path):
    """HumanEval-X's known-bad problems are not benched, and the run says so (never silently)."""
    answers = answers_file(tmp_path, ["```javascript\nconst x = 1;\n```"])
    done = run_cli(
        "bench", "humaneval-js", "--limit", "1", "--strategies", "single",
        "--model", f"scripted:{answers}", "--out", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notice = [line for line in done.stderr.splitlines() if "known-bad" in line]
    assert len(notice) == 1 and all(
        p in notice[0] for p in ("JavaScript/112", "JavaScript/155", "JavaScript/162")
    )
    assert "Rust/50" not in notice[0]


def test_the_report_links_every_problem_to_a_readable_trace(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out, "--limit", "3"]
    assert run_cli(*base, "--strategies", "single,parallel:2").returncode == 0
    assert run_cli("report", out).returncode == 0
    md = (out / "report.md").read_text()
    assert "## Problems" in md
    links = [part.split(")")[0] for part in md.split("](")[1:] if part.startswith("traces/")]
    assert len(links) == 6, "one link per (problem, row)"
    for link in links:
        page = (out / link).read_text()
        assert link.endswith(".html") and "<pre>trace " in page and "final: " in page
    html = (out / "report.html").read_text()
    assert html.count('<a href="traces/') == 6


def test_a_result_whose_trace_file_is_gone_is_shown_without_a_link(tmp_path, problem_file, answers):
    """A run rebuilt from its portable files on another machine has no trace files: no dead links."""
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out, "--limit", "2"]
    assert run_cli(*base, "--strategies", "single").returncode == 0
    gone = sorted((out / "traces").glob("*.json"))[0]
    gone.unlink()
    assert run_cli("report", out).returncode == 0
    md = (out / "report.md").read_text()
    links = [part.split(")")[0] for part in md.split("](")[1:] if part.startswith("traces/")]
    assert len(links) == 1 and gone.stem not in links[0] and (out / links[0]).is_file()


def test_a_new_directory_replays_the_calls_of_another_with_calls_from(tmp_path, problem_file, answers):
    """A run over other problems (here one more) cannot resume the old directory, but ``--calls-from``
    gives it the old run's calls: the new directory keeps those it asked for again, plus its own."""
    old, new = tmp_path / "old", tmp_path / "new"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--strategies", "single,parallel:2"]
    assert run_cli(*base, "--limit", "2", "--out", old).returncode == 0
    _one_line_error(run_cli(*base, "--limit", "3", "--out", old), "another configuration")
    _one_line_error(
        run_cli(*base, "--limit", "3", "--out", new, "--calls-from", tmp_path), "--calls-from", "calls.jsonl"
    )
    assert not new.exists()
    assert run_cli(*base, "--limit", "3", "--out", new, "--calls-from", old).returncode == 0
    old_calls = [json.loads(line) for line in (old / "calls.jsonl").read_text().splitlines()]
    new_calls = {c["key"]: c for c in map(json.loads, (new / "calls.jsonl").read_text().splitlines())}
    assert all(new_calls[c["key"]] == c for c in old_calls)  # adopted as they were
    assert len(new_calls) > len(old_calls)  # and the third problem's own
    # repeatable: a run over four problems takes the calls of both directories
    both = tmp_path / "both"
    donors = ["--calls-from", old, "--calls-from", new]
    assert run_cli(*base, "--limit", "4", "--out", both, *donors).returncode == 0
    both_calls = {c["key"]: c for c in map(json.loads, (both / "calls.jsonl").read_text().splitlines())}
    assert all(both_calls[k] == c for k, c in new_calls.items()) and len(both_calls) > len(new_calls)


def test_a_variant_row_sets_strategy_options_and_is_redone_by_its_name(tmp_path, problem_file, answers):
    out = tmp_path / "out"
    variant = "hybrid:2[repair_rounds=0,inputs=0]"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out, "--limit", "2"]
    first = run_cli(*base, "--strategies", f"hybrid:2,{variant}")
    assert first.returncode == 0, first.stderr
    rows = {r["name"]: r for r in json.loads((out / "run.json").read_text())["config"]["rows"]}
    assert rows[variant]["options"] == {"repair_rounds": 0, "inputs": 0} and "options" not in rows["hybrid:2"]
    assert rows[variant]["settings"]["options"]["repair_rounds"] == 0
    assert rows["hybrid:2"]["settings"]["options"]["repair_rounds"] == 2
    assert set(json.loads(run_cli("report", out, "--json").stdout)["strategies"]) == {"hybrid:2", variant}
    redone = run_cli(*base, "--strategies", f"hybrid:2,{variant}", "--redo", variant)
    assert redone.returncode == 0, redone.stderr
    assert "2 stored results dropped" in redone.stderr and "2 already stored" in redone.stdout
    _one_line_error(run_cli(*base, "--strategies", "hybrid:2[repair_rounds=x]"), "bad options for strategy")


def test_no_pace_replays_stored_calls_at_once_and_still_charges_their_latency(tmp_path, problem_file):
    """A replay normally takes its call's recorded latency; ``--no-pace`` skips the wait (a rerun over
    stored calls, e.g. after the answer extraction changed), and the row is still charged the call's
    engine seconds."""
    slow = answers_file(tmp_path, [ALL_FUNCTIONS], delay=8.0)
    old, new = tmp_path / "old", tmp_path / "new"
    base = ["bench", problem_file, "--model", f"scripted:{slow}", "--strategies", "single", "--limit", "1"]
    assert run_cli(*base, "--out", old).returncode == 0
    done = run_cli(*base, "--out", new, "--calls-from", old, "--no-pace")
    assert done.returncode == 0, done.stderr
    (result,) = [json.loads(line) for line in (new / "results.jsonl").read_text().splitlines()]
    assert result["model_seconds"] >= 8.0 > result["wall_seconds"]
