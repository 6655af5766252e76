"""benchmarks/optillm_rows.py: the approaches it accepts, the rows and bench command it prints (read back by
memdoor bench's own parser and config builder, as a later session will run them), the meter log's tally, and
the proxy's environment. No model, no proxy."""

from __future__ import annotations

import argparse
import ast
import json
import shlex
from pathlib import Path

import optillm_approaches
import optillm_rows
import pytest
from optillm_stack import proxy_env

from memdoor.commands import bench
from memdoor.core.errors import UsageError
from memdoor.models.catalog import CATALOG, parameters_of
from memdoor.models.openai_model import parse_spec

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MATCHED = BENCHMARKS / "results" / "humaneval-matched"


def _bench_config(argv: list[str]):
    """What ``memdoor bench`` makes of a printed command (no file touched)."""
    assert argv[:2] == ["memdoor", "bench"]
    parser = argparse.ArgumentParser()
    bench.configure(parser)
    return bench.build_config(parser.parse_args(argv[2:]))


def _printed_command(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("memdoor bench "))
    return shlex.split(line)


def test_the_approaches_that_fit_code_are_the_default_and_unsafe_or_unknown_ones_are_refused():
    assert optillm_approaches.parse_approaches(",".join(optillm_approaches.APPROACHES)) == list(
        optillm_approaches.APPROACHES
    )
    assert optillm_approaches.parse_approaches(" bon , mcts ") == ["bon", "mcts"]
    with pytest.raises(UsageError, match="outside any sandbox"):
        optillm_approaches.parse_approaches("bon,executecode")
    with pytest.raises(UsageError, match="unknown optillm approach 'best_of_n'"):
        optillm_approaches.parse_approaches("best_of_n")
    with pytest.raises(UsageError, match="named twice"):
        optillm_approaches.parse_approaches("bon,bon")
    with pytest.raises(UsageError):
        optillm_approaches.parse_approaches(" , ")


def test_each_row_is_an_openai_spec_of_the_approach_on_the_relay_with_the_catalog_size():
    rows = optillm_rows.optillm_rows(["bon", "self_consistency"], "qwen2.5-coder-0.5b", 8411)
    params = dict(
        p.rsplit("=", 1) for p in optillm_rows.params_flags(["bon", "self_consistency"], "qwen2.5-coder-0.5b")
    )
    for row, approach in zip(rows, ["bon", "self_consistency"], strict=True):
        strategy, _, spec = row.partition("@")
        assert strategy == "single"
        parsed = parse_spec(spec.removeprefix("openai:"), env={})
        # optillm splits the name at '-': the approach, then the model the server is asked for
        assert parsed.model == f"{approach}-qwen2.5-coder-0.5b"
        assert parsed.base_url == "http://127.0.0.1:8411/v1"
        config = parsed.config()
        assert config.concurrency == 1 and config.request_timeout_s == optillm_approaches.REQUEST_TIMEOUT_S
        sizes = {k: float(v) for k, v in params.items()}
        assert parameters_of(spec, sizes) == CATALOG["qwen2.5-coder-0.5b"].parameters


def test_the_printed_command_of_a_new_run_is_read_by_memdoor_bench_with_every_size_known():
    args = optillm_rows.parser().parse_args(
        ["rows", "--model", "qwen2.5-coder-1.5b", "--approaches", "none,bon,plansearch", "--port", "8499"]
    )
    argv = _printed_command(optillm_rows.rows_text(args))
    argv += ["--budget-compute", "1e13"]  # refused unless every model's size is given
    config = _bench_config(argv)
    names = [r.name for r in config.rows]
    assert names[-1] == "single@local:qwen2.5-coder-1.5b" and config.rows[-1].baseline
    assert "adaptive:5@local:qwen2.5-coder-1.5b" in names
    optillm = [n for n in names if "openai:" in n]
    assert optillm == optillm_rows.optillm_rows(["none", "bon", "plansearch"], "qwen2.5-coder-1.5b", 8499)
    for row in config.rows:
        assert parameters_of(row.models[0], config.params) == CATALOG["qwen2.5-coder-1.5b"].parameters
    assert (
        config.max_tokens == 512
        and argv[argv.index("--out") + 1] == "runs/optillm-humaneval-qwen2.5-coder-1.5b"
    )


def test_beside_a_stored_run_its_rows_and_settings_are_kept_and_its_calls_replayed():
    args = optillm_rows.parser().parse_args(
        ["rows", "--model", "qwen2.5-coder-1.5b", "--approaches", "none,moa", "--beside", str(MATCHED)]
    )
    argv = _printed_command(optillm_rows.rows_text(args))
    config = _bench_config(argv).model_dump(mode="json")
    stored = json.loads((MATCHED / "run.json").read_text())["config"]
    assert {k: v for k, v in config.items() if k not in ("rows", "params")} == {
        k: v for k, v in stored.items() if k not in ("rows", "params")
    }
    # the same rows (their settings and revision are recorded when the run starts, from today's code)
    kept = [{k: v for k, v in r.items() if k not in ("revision", "settings")} for r in stored["rows"]]
    mine = [
        {k: v for k, v in r.items() if k != "settings"} for r in config["rows"] if "openai:" not in r["name"]
    ]
    # in any order: the command names the baseline last, and a run extended later keeps a new row after it
    # (the rows go to a new directory, so their order there is free)
    assert sorted(mine, key=lambda r: r["name"]) == sorted(kept, key=lambda r: r["name"])
    assert [r["name"] for r in config["rows"] if "openai:" in r["name"]] == optillm_rows.optillm_rows(
        ["none", "moa"], "qwen2.5-coder-1.5b", optillm_rows.DEFAULT_PORT
    )
    assert argv[argv.index("--calls-from") + 1] == str(MATCHED) and "--no-pace" in argv
    assert argv[argv.index("--out") + 1] == f"{MATCHED}-optillm"  # never the stored directory


def test_beside_carries_the_stored_runs_own_sizes_and_filters(tmp_path):
    run = {
        "config": {
            "suite": "problems.jsonl",
            "rows": [{"name": "single@openai:q@http://h/v1", "baseline": True}],
            "params": {"openai:q@http://h/v1": 7e9},
            "budget_compute": 3.3e12,
            "filters": {"difficulty": ["easy"], "limit": 5, "since": None, "until": "2024-05-01"},
            "max_tokens": 700,
            "seed": 3,
        }
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    args = optillm_rows.parser().parse_args(["rows", "--approaches", "bon", "--beside", str(tmp_path)])
    config = _bench_config(_printed_command(optillm_rows.rows_text(args)))
    assert config.params == {"openai:q@http://h/v1": 7e9, "bon-qwen2.5-coder-0.5b": 0.49e9}
    assert config.budget_compute == 3.3e12 and config.max_tokens == 700 and config.seed == 3
    assert config.filters.difficulty == ["easy"] and config.filters.limit == 5
    assert str(config.filters.until) == "2024-05-01" and config.filters.since is None
    assert [r.name for r in config.rows if r.baseline] == ["single@openai:q@http://h/v1"]


REWRITE = BENCHMARKS / "results" / "humaneval-rewrite"


def test_beside_a_run_whose_rows_name_no_team_its_model_is_given_too():
    """humaneval-rewrite's rows are ``parallel:5`` and the like, run with ``--model local:qwen2.5-coder-0.5b``:
    the printed command names that model, so bench accepts it and the rows are the stored ones."""
    args = optillm_rows.parser().parse_args(
        ["rows", "--model", "qwen2.5-coder-0.5b", "--approaches", "bon", "--beside", str(REWRITE)]
    )
    argv = _printed_command(optillm_rows.rows_text(args))
    assert "--model=local:qwen2.5-coder-0.5b" in argv
    stored = json.loads((REWRITE / "run.json").read_text())["config"]["rows"]
    config = _bench_config(argv)
    models = {r.name: r.models for r in config.rows}
    assert all(models[r["name"]] == r["models"] for r in stored)


def test_beside_a_run_whose_teamless_rows_differ_in_models_is_refused(tmp_path):
    rows = [{"name": "parallel:5", "models": ["local:a"]}, {"name": "hybrid:5", "models": ["local:b"]}]
    (tmp_path / "run.json").write_text(json.dumps({"config": {"suite": "humaneval", "rows": rows}}))
    args = optillm_rows.parser().parse_args(["rows", "--approaches", "bon", "--beside", str(tmp_path)])
    with pytest.raises(UsageError, match="ran with different models"):
        optillm_rows.rows_text(args)
    rows[1] = {"name": "hybrid:5"}
    (tmp_path / "run.json").write_text(json.dumps({"config": {"suite": "humaneval", "rows": rows}}))
    with pytest.raises(UsageError, match="a row named without a team lists no models"):
        optillm_rows.rows_text(args)


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert optillm_rows.main(["rows", "--approaches", "coc"]) == 2
    assert optillm_rows.main(["rows", "--model", "qwen-7b"]) == 2
    assert optillm_rows.main(["rows", "--beside", str(tmp_path)]) == 2
    assert optillm_rows.main(["tally", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("optillm_rows: ") for line in err)
    assert "not a bench run directory" in err[2]


def test_the_tally_counts_what_the_server_did_failed_requests_included():
    lines = [
        json.dumps({"model": "bon-qwen2.5-coder-0.5b", "status": 200, "backend_calls": 4, "prompt_tokens": 400,
                    "completion_tokens": 250, "proxy_usage": {"completion_tokens": 90}}),
        json.dumps({"model": "bon-qwen2.5-coder-0.5b", "status": 500, "backend_calls": 1, "prompt_tokens": 100,
                    "completion_tokens": 64, "proxy_usage": None}),
        "",
        json.dumps({"model": "other", "status": 200, "backend_calls": 1, "prompt_tokens": 1, "completion_tokens": 1}),
    ]  # fmt: skip
    t = optillm_rows.tally(lines)
    bon = t["bon-qwen2.5-coder-0.5b"]
    assert (bon["requests"], bon["failed"], bon["backend_calls"]) == (2, 1, 5)
    assert (bon["prompt_tokens"], bon["completion_tokens"], bon["proxy_completion_tokens"]) == (500, 314, 90)
    assert bon["compute"] == pytest.approx(2 * 0.49e9 * 814)
    assert t["other"]["compute"] is None  # not a catalog model: no size, no compute


def test_the_proxy_sees_no_provider_keys_tokens_or_web_proxies():
    env = proxy_env(
        {"PATH": "/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "OPENAI_API_KEY": "sk-real", "OPTILLM_API_KEY": "x",
         "CEREBRAS_API_KEY": "y", "https_proxy": "http://p:1", "HTTP_PROXY": "http://p:1", "HF_TOKEN": "t",
         "AZURE_OPENAI_API_KEY": "z", "GITHUB_TOKEN": "ghp_secret", "AWS_SECRET_ACCESS_KEY": "a"}
    )  # fmt: skip
    assert (
        env["OPENAI_API_KEY"] == "local-server-no-key"
    )  # a placeholder: optillm then uses its OpenAI client
    assert env == {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",  # TMPDIR is not set, so not added
        "OPENAI_API_KEY": "local-server-no-key",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    assert "GITHUB_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env


def _imports(script: str) -> set[str]:
    tree = ast.parse((BENCHMARKS / script).read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}


def test_imports_point_one_way_from_the_command_to_the_stack_to_the_approaches():
    assert {"optillm_approaches", "optillm_stack"} <= _imports("optillm_rows.py")
    assert "optillm_approaches" in _imports("optillm_stack.py")
    assert not {"optillm_rows", "optillm_stack"} & (
        _imports("optillm_stack.py") | _imports("optillm_approaches.py")
    )
