"""Dollars and latency per problem on a serving setup the user describes: the small model's numbers, its
inputs and assumptions printed beside them, and bad setups refused on one line (real store, real CLI)."""

from __future__ import annotations

import json

import pytest
from bench_helpers import run_cli

from memdoor.bench.analysis import analyse
from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.report import REPORT_MD
from memdoor.bench.serving import parse_setup
from memdoor.bench.store import ResultsStore
from memdoor.core.errors import UsageError

SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"
ONE = f"single@{BIG}"
TEAM = f"parallel:5@{SMALL}"
SETUP = "gpus=2,gpu_hour_usd=3.0,tokens_per_s=1000,streams=4"


@pytest.fixture
def results_dir(tmp_path):
    config = BenchConfig(suite="s.jsonl", rows=parse_rows(f"{ONE},{TEAM}", [], []))
    run = RunRecord(config=config, problems_sha256="x", problem_count=2)
    problems = [ProblemInfo(id=f"p{i}", position=i) for i in range(2)]
    with ResultsStore.create_or_resume(tmp_path, run, problems) as store:
        for i in range(2):
            for row, tokens, calls in ((ONE, 1000, 1), (TEAM, 5000, 5)):
                store.record(
                    ResultRecord(
                        problem_id=f"p{i}",
                        row=row,
                        status="done",
                        passed=True,
                        code="x",
                        prompt_tokens=tokens // 2,
                        completion_tokens=tokens // 2,
                        compute=2 * (1.54e9 if row == ONE else 0.49e9) * tokens,
                        calls=calls,
                    )
                )
    return tmp_path


def test_the_setup_is_given_as_keys_or_a_yaml_file_and_bad_input_is_one_line(tmp_path):
    setup = parse_setup(SETUP)
    assert (setup.gpus, setup.gpu_hour_usd, setup.tokens_per_s, setup.streams) == (2, 3.0, 1000.0, 4)
    assert setup.utilization == 1.0 and setup.model is None
    path = tmp_path / "setup.yaml"
    path.write_text("gpus: 2\ngpu_hour_usd: 3.0\ntokens_per_s: 1000\nstreams: 4\nutilization: 0.5\n")
    assert parse_setup(str(path)).utilization == 0.5
    for bad, words in (
        ("gpus=1", "gpu_hour_usd: Field required"),
        (SETUP + ",gpus=0", "gpus"),
        (SETUP + ",speed=3", "speed"),
        ("gpus", "expected KEY=VALUE"),
        (SETUP.replace("1000", "-5"), "tokens_per_s"),
        (SETUP + ",utilization=1.5", "utilization"),
        (str(tmp_path / "missing.yaml"), "cannot read it"),
    ):
        with pytest.raises(UsageError, match=words) as e:
            parse_setup(bad)
        assert "\n" not in str(e.value)


def test_dollars_and_latency_follow_the_documented_model(results_dir):
    with ResultsStore.open(results_dir) as store:
        s = analyse(store, resamples=100, serving=parse_setup(SETUP)).serving
    assert s is not None and s.setup.model == BIG and s.reference_parameters == 1.54e9
    one, team = s.rows[ONE], s.rows[TEAM]
    assert one.work_tokens == pytest.approx(1000)  # the reference model's own tokens
    assert team.work_tokens == pytest.approx(5000 * 0.49 / 1.54)  # a smaller model's tokens count less
    assert one.usd_per_problem == pytest.approx(2 * 3.0 / 3600 * 1000 / 1000)
    assert one.problems_per_hour == pytest.approx(3600)
    assert one.latency_s == pytest.approx((4.0, 4.0))  # 1000 tokens at 1000/4 tokens/s per stream
    serial = team.work_tokens * 4 / 1000
    assert team.latency_s == pytest.approx((serial / 4, serial))  # five calls, at most four streams at once
    assert any("1000 tokens/s in all at 4 concurrent requests" in a for a in s.assumptions)
    assert any("only when the calls are independent" in a for a in s.assumptions)


def test_the_report_prints_the_figures_with_their_inputs(results_dir):
    done = run_cli(
        "report", results_dir, "--json", "--resamples", "100", "--serving", SETUP + ",utilization=0.5"
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)["serving"]
    assert doc["setup"]["utilization"] == 0.5 and doc["setup"]["model"] == BIG
    assert doc["rows"][ONE]["usd_per_problem"] == pytest.approx(2 * 3.0 / 3600 * 1.0 / 0.5)
    md = (results_dir / REPORT_MD).read_text()
    section = md.split("## Dollars and latency on your serving setup", 1)[1].split("\n## ", 1)[0]
    assert '"tokens_per_s": 1000.0' in section and '"gpus": 2' in section  # the inputs beside the figures
    assert f"| {ONE} | 1,000 | $0.003333 | 1,800 | 4.00 – 4.00 |" in section
    plain = run_cli("report", results_dir, "--resamples", "100")
    assert plain.returncode == 0 and "serving setup" not in (results_dir / REPORT_MD).read_text()


def test_a_bad_setup_is_refused_before_anything_is_written(results_dir):
    before = (results_dir / "run.json").read_bytes()
    done = run_cli("report", results_dir, "--serving", "gpus=1,tokens_per_s=fast")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "bad --serving" in done.stderr
    assert not (results_dir / REPORT_MD).exists() and (results_dir / "run.json").read_bytes() == before
    unknown = run_cli("report", results_dir, "--serving", SETUP + ",model=openai:x@http://127.0.0.1:1/v1")
    assert unknown.returncode == 2 and "size is unknown" in unknown.stderr


def test_no_reference_model_is_named_when_some_size_is_unknown(tmp_path):
    """Tokens are then counted as they are, whatever the model: no model is printed as the reference."""
    other = "scripted:answers.json"  # a model whose size the run was not given
    rows = parse_rows(f"{ONE},single@{other}", [], [])
    run = RunRecord(config=BenchConfig(suite="s.jsonl", rows=rows), problems_sha256="x", problem_count=1)
    with ResultsStore.create_or_resume(tmp_path, run, [ProblemInfo(id="p0", position=0)]) as store:
        for r in rows:
            store.record(
                ResultRecord(
                    problem_id="p0", row=r.name, status="done", passed=True, code="x",
                    prompt_tokens=500, completion_tokens=500, calls=1,
                )
            )  # fmt: skip
    with ResultsStore.open(tmp_path) as store:
        s = analyse(store, resamples=100, serving=parse_setup(SETUP)).serving
    assert s is not None and s.reference_parameters is None
    assert s.setup.model is None  # not the first model, whose tokens would be counted unscaled
    assert s.rows[ONE].work_tokens == pytest.approx(1000) == s.rows[f"single@{other}"].work_tokens
    assert any("some model's size is unknown" in a for a in s.assumptions)
