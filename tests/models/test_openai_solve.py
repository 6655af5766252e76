"""``memdoor solve`` with an ``openai:`` model on a real loopback server: the call lands in the JSON ledger."""

from __future__ import annotations

import json

import pytest
from fakeserver import FakeOpenAIServer

PROBLEM = """\
id: add-two
statement: Read two integers and print their sum.
tests:
  - {input: "1 2\\n", output: "3\\n"}
"""


@pytest.fixture
def problems(tmp_path):
    path = tmp_path / "problems.yaml"
    path.write_text(PROBLEM)
    return path


def solve(problems, spec: str, capsys) -> tuple[int, dict | None, str]:
    from memdoor.cli import main

    code = main(
        ["solve", str(problems), "--problem", "add-two", "--strategy", "single", "--model", spec, "--json"]
    )
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


def test_solve_records_the_call_and_its_price(problems, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMDOOR_PRICES", '{"openai:fake-model": [1000000, 2000000]}')  # $1 and $2 a token
    with FakeOpenAIServer() as server:
        _, result, err = solve(problems, f"openai:fake-model@{server.base_url}", capsys)
    assert result is not None, err
    # the fake server's answer is no program: the attempt fails, but it is fully accounted for
    assert result["passed"] is False
    ledger = result["ledger"]
    assert ledger["calls"] == 1
    assert ledger["prompt_tokens"] > 0
    assert ledger["completion_tokens"] > 0
    assert ledger["usd"] == pytest.approx(ledger["prompt_tokens"] * 1 + ledger["completion_tokens"] * 2)
    assert len(server.requests) == 1


def test_solve_unpriced_model_reports_null_dollars(problems, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMDOOR_PRICES", raising=False)
    with FakeOpenAIServer() as server:
        _, result, err = solve(problems, f"openai:fake-model@{server.base_url}", capsys)
    assert result is not None, err
    assert result["ledger"]["calls"] == 1
    assert result["ledger"]["usd"] is None


def test_solve_with_an_endpoint_that_is_down(problems, capsys, monkeypatch, tmp_path):
    import socket

    monkeypatch.setenv("MEMDOOR_HOME", str(tmp_path / "home"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, result, err = solve(
        problems, f"openai:m@http://127.0.0.1:{port}/v1?max_retries=1&backoff_base_s=0.01", capsys
    )
    # the failure is recorded, not hidden: one failed call in the ledger or a one-line error
    if result is not None:
        assert result["passed"] is False
        assert result["ledger"]["failed_calls"] == 1
    else:
        assert code == 2
        assert err.count("\n") == 1
