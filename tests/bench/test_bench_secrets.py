"""A password in a model spec's URL reaches no file of a bench's results directory, no line it prints and no
report of it; the model is still called with it, and the same command resumes the run."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest
from bench_helpers import run_cli
from tests.models.fakeserver import FakeOpenAIServer

from memdoor.bench.config import BenchConfig, hide_secrets, parse_params, parse_rows
from memdoor.core.errors import UsageError

PASSWORD = "s3cretGOODpw"


def test_a_specs_password_reaches_no_file_line_or_report_and_the_run_resumes(
    tmp_path: Path, problem_file: Path
):
    out = tmp_path / "out"
    with FakeOpenAIServer() as server:
        spec = f"openai:fake-model@http://alice:{PASSWORD}@127.0.0.1:{server.port}/v1"
        shown = f"openai:fake-model@http://alice:***@127.0.0.1:{server.port}/v1"
        argv = ["bench", problem_file, "--limit", "1", "--strategies", f"single@{spec}"]
        argv += ["--params", f"{spec}=1e9", "--budget-compute", "1e15", "--out", out]
        first = run_cli(*argv)
        assert first.returncode == 0, first.stderr[-2000:]
        calls = len(server.requests)
        assert calls > 0
        basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
        assert f"Basic {basic}" in server.authorizations  # the model was called with the raw spec
        report = run_cli("report", out)
        assert report.returncode == 0, report.stderr[-2000:]
        again = run_cli(*argv)
        assert again.returncode == 0, again.stderr[-2000:]
        assert "0 run (0 errors), 1 already stored" in again.stdout
        assert len(server.requests) == calls  # nothing was left to do

    assert f"single@{shown}" in report.stdout
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "results.sqlite" for p in files) and any(p.name == "run.json" for p in files)
    for data in [p.read_bytes() for p in files]:
        assert PASSWORD.encode() not in data and basic.encode() not in data
    for text in (first.stdout, first.stderr, report.stdout, report.stderr, again.stdout, again.stderr):
        assert PASSWORD not in text and basic not in text
    with sqlite3.connect(out / "results.sqlite") as conn:
        (config,) = conn.execute("SELECT config_json FROM run").fetchone()
        (model,) = conn.execute("SELECT DISTINCT model FROM calls").fetchone()
        argvs = [json.loads(a) for (a,) in conn.execute("SELECT argv_json FROM sessions")]
    assert json.loads(config)["params"] == {shown: 1e9}
    assert model == shown
    assert len(argvs) == 2 and all(f"single@{shown}" in a for a in argvs)


def test_a_config_without_secrets_is_recorded_as_before_and_specs_alike_but_for_secrets_are_refused():
    plain = "openai:q@http://127.0.0.1:8000/v1"
    config = BenchConfig(suite="s", rows=parse_rows(f"single,parallel:2@{plain}", [plain], []))
    config = config.model_copy(update={"params": parse_params([f"{plain}=7e9"])})
    assert hide_secrets(config) == (config, {})

    good, wrong = (f"openai:q@http://alice:{pw}@h/v1" for pw in ("GOOD", "WRONG"))
    shown, raw_of = hide_secrets(
        BenchConfig(suite="s", rows=parse_rows(f"parallel:2@{good}*1+{plain}*1", [], []))
    )
    assert shown.rows[0].name == f"parallel:2@openai:q@http://alice:***@h/v1*1+{plain}*1"
    assert raw_of == {"openai:q@http://alice:***@h/v1": good}
    with pytest.raises(UsageError, match="differ only in their secrets"):
        hide_secrets(BenchConfig(suite="s", rows=parse_rows(f"single@{good},parallel:2@{wrong}", [], [])))


def test_a_demos_model_password_reaches_no_file_or_line(tmp_path: Path):
    out = tmp_path / "demo"
    with FakeOpenAIServer() as server:
        spec = f"openai:fake-model@http://alice:{PASSWORD}@127.0.0.1:{server.port}/v1"
        result = run_cli("demo", "--model", spec, "--team", "parallel:2", "--out", out)
        assert result.returncode == 0, result.stderr[-2000:]
        assert server.requests
    for data in [p.read_bytes() for p in out.rglob("*") if p.is_file()]:
        assert PASSWORD.encode() not in data
    assert PASSWORD not in result.stdout + result.stderr
