"""The estimate of an answer being correct: fitted on stored results, judged on problems it never saw."""

from __future__ import annotations

import json
import random

import pytest

from memdoor.bench.analysis import analyse
from memdoor.bench.calibrate import fit, reliability
from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.report import REPORT_MD, write_report
from memdoor.bench.store import ResultsStore
from memdoor.core.solution import Signals
from memdoor.select.calibration import FEATURES, Calibration, logistic_fit

ROWS = parse_rows("single,parallel:5", ["local:qwen2.5-coder-0.5b"], [])


def synthetic(n: int, seed: int = 0) -> list[ResultRecord]:
    """Answers whose chance of being right grows with agreement and passing the public tests."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        for row in ("single", "parallel:5"):
            pool = 1 if row == "single" else 5
            agree = 1 if pool == 1 else rng.randint(1, 5)
            public_ok = rng.random() < 0.7
            p = 0.1 + 0.5 * public_ok + 0.35 * (agree / pool) * public_ok
            sig = Signals(
                agree=agree, pool=pool, public_passed=2 if public_ok else 1, public_total=2,
                mean_logprob=-rng.random(), rule="majority" if agree >= 3 else "confidence",
            )  # fmt: skip
            out.append(
                ResultRecord(
                    problem_id=f"p{i:03d}",
                    row=row,
                    status="done",
                    passed=rng.random() < p,
                    trace_id=f"t{i}{row}",
                    signals=sig.model_dump_json(),
                )
            )
    return out


def test_logistic_fit_recovers_a_known_direction():
    rng = random.Random(1)
    xs = [[rng.random()] for _ in range(2000)]
    ys = [int(rng.random() < 1 / (1 + 2.718 ** -(4 * x[0] - 2))) for x in xs]
    [w], b = logistic_fit(xs, ys, l2=0.01)
    assert 3.0 < w < 5.0 and -2.7 < b < -1.3


def test_the_fit_beats_the_base_rate_out_of_fold_and_is_calibrated():
    cal = fit(synthetic(300), ROWS, fitted_on="synthetic")
    assert cal is not None and cal.features == list(FEATURES)
    oof = cal.out_of_fold
    assert oof.results == 600 and oof.brier < oof.brier_base and oof.ece < 0.08
    strong = Signals(agree=5, pool=5, public_passed=2, public_total=2, mean_logprob=-0.1, rule="majority")
    weak = Signals(agree=1, pool=5, public_passed=1, public_total=2, mean_logprob=-0.9, rule="confidence")
    assert cal.predict(strong, "parallel:5") > 0.75 > 0.3 > cal.predict(weak, "parallel:5")


def test_too_few_results_or_one_outcome_fit_nothing():
    assert fit(synthetic(10), ROWS, fitted_on="x") is None
    same = [r.model_copy(update={"passed": True}) for r in synthetic(100)]
    assert fit(same, ROWS, fitted_on="x") is None


def test_reliability_bins_and_ece():
    fit_ = reliability([0.1, 0.1, 0.9, 0.9], [0, 0, 1, 1])
    assert fit_.ece < 0.11 and [n for _, _, n in fit_.bins] == [2, 2]
    assert fit_.brier == pytest.approx(0.01)


def test_the_report_shows_the_reliability_and_writes_the_fit(tmp_path):
    config = BenchConfig(suite="synthetic", rows=ROWS)
    # the last 20 have no hidden tests: there passing is the public tests, so the fit leaves them out
    infos = [ProblemInfo(id=f"p{i:03d}", position=i, hidden_tests=5 if i < 100 else 0) for i in range(120)]
    run = RunRecord(config=config, problems_sha256="x", problem_count=120)
    with ResultsStore.create_or_resume(tmp_path, run, infos) as store:
        for r in synthetic(120):
            store.record(r)
    with ResultsStore.open(tmp_path) as store:
        a = analyse(store, resamples=200)
    assert a.calibration is not None and a.summary()["calibration"]["out_of_fold"]["results"] == 200
    write_report(a, tmp_path)
    md = (tmp_path / REPORT_MD).read_text()
    assert "## How far to trust an answer" in md and "expected calibration error" in md
    assert (tmp_path / "calibration.png").stat().st_size > 1000
    from bench_helpers import run_cli

    out = tmp_path / "cal.json"
    assert run_cli("report", tmp_path, "--calibration-out", out).returncode == 0
    cal = Calibration.model_validate(json.loads(out.read_text()))
    assert "synthetic" in cal.fitted_on and cal.out_of_fold is not None


def test_a_malformed_calibration_is_refused_not_used():
    good = Calibration(features=list(FEATURES), weights=[0.0] * len(FEATURES), bias=0.0, fitted_on="x")
    assert (
        good.predict(
            Signals(agree=1, pool=1, public_passed=0, public_total=0, mean_logprob=None, rule=None), "single"
        )
        == 0.5
    )
    doc = json.loads(good.model_dump_json())
    for bad in ({"weights": [0.0]}, {"bias": float("nan")}):
        with pytest.raises(ValueError):
            Calibration.model_validate({**doc, **bad})


def test_the_shipped_calibration_loads_and_says_what_it_was_fitted_on():
    from memdoor.select.calibration import load_default

    cal = load_default()
    assert cal is not None, "memdoor/data/calibration.json is missing or unreadable"
    assert cal.features == list(FEATURES) and "humaneval" in cal.fitted_on
    fit_ = cal.out_of_fold
    assert fit_ is not None and fit_.results >= 40 and 0.0 <= fit_.brier <= 1.0
    p = cal.predict(
        Signals(agree=5, pool=5, public_passed=3, public_total=3, mean_logprob=-0.1, rule="majority"),
        "parallel:5",
    )
    q = cal.predict(
        Signals(agree=1, pool=5, public_passed=0, public_total=3, mean_logprob=-0.9, rule="confidence"),
        "parallel:5",
    )
    assert 0.0 < q < p < 1.0, "five agents agreeing on code that passes its examples beat a lone failing one"
