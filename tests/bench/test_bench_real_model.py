"""The bench end to end with the real embedded 0.5B model (slow tier) on two tiny problems."""

from __future__ import annotations

import json
import sqlite3

import pytest
from bench_helpers import run_cli

MODEL = "local:qwen2.5-coder-0.5b"


@pytest.mark.slow
def test_bench_report_and_export_with_the_real_model(tmp_path, problem_file):
    out = tmp_path / "out"
    bench = run_cli(
        "bench", problem_file, "--strategies", "single", "--model", MODEL, "--limit", "2",
        "--max-tokens", "256", "--out", out, timeout=1800,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    report = run_cli("report", out, "--json", "--resamples", "1000")
    assert report.returncode == 0, report.stderr
    single = json.loads(report.stdout)["strategies"]["single"]
    assert single["total"] == 2 and single["errors"] == 0
    assert single["tokens_per_problem"] > 0 and single["seconds_per_problem"] > 0
    assert single["usd_per_problem"] is None  # local models are unpriced
    assert 0 <= single["solved"] <= 2 and single["pass_at_1"] == single["solved"] / 2
    samples = tmp_path / "generations.json"
    assert run_cli("export", out, "--format", "livecodebench", "--out", samples).returncode == 0
    assert [g["question_id"] for g in json.loads(samples.read_text())] == ["add", "mul"]
    # Resuming the finished run does not load or call the model again.
    again = run_cli("bench", problem_file, "--strategies", "single", "--model", MODEL, "--limit", "2",
                    "--max-tokens", "256", "--out", out)  # fmt: skip
    assert again.returncode == 0 and "0 run" in again.stdout


@pytest.mark.slow
def test_single_is_parallels_agent_0_draft_with_the_real_model(tmp_path):
    """Paired draws with the real model on 2 HumanEval problems: single's answer is agent 0's draft."""
    out = tmp_path / "out"
    bench = run_cli(
        "bench", "humaneval", "--strategies", "single,parallel:2", "--model", MODEL, "--limit", "2",
        "--max-tokens", "128", "--out", out, timeout=1800,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    rows = conn.execute("SELECT problem_id, row, code, solution_json FROM results").fetchall()
    by = {(p, r): (code, json.loads(s)) for p, r, code, s in rows}
    assert {p for p, _ in by} == {"HumanEval/0", "HumanEval/1"}
    for p in ("HumanEval/0", "HumanEval/1"):
        drafts = by[(p, "parallel:2")][1]["candidates"]
        assert by[(p, "single")][0] == next(c["code"] for c in drafts if c["agent"] == "agent0")
    calls = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    assert calls == 4  # 2 problems × 2 agents; single's calls were replayed
