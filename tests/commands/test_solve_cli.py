"""``memdoor solve`` and ``memdoor trace`` as a user runs them: real processes, the real sandbox,
scripted models (from answer files) for the control flow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBLEMS = """\
problems:
  - id: add
    function: add
    statement: Return a + b.
    starter_code: |
      def add(a: int, b: int) -> int:
    tests:
      - {args: [1, 2], expected: 3}
      - {args: [2, 2], expected: 4}
    hidden_tests:
      - {args: [0, 5], expected: 5}
      - {args: [-3, 1], expected: -2}
  - id: add-public-only
    function: add
    statement: Return a + b.
    tests:
      - {args: [1, 2], expected: 3}
"""
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
OVERFIT = "```python\ndef add(a, b):\n    return 3 if a == 1 else 4\n```"
JSON_KEYS = {
    "problem_id",
    "strategy",
    "passed",
    "code",
    "verdict",
    "ledger",
    "agents",
    "confidence",
    "oracle",
    "trace_id",
}


@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "problems.yaml").write_text(PROBLEMS)
    for name, answers in {"good": [GOOD], "overfit": [OVERFIT]}.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(answers))
    return tmp_path


def memdoor(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMDOOR_HOME": str(home / "mdhome")}
    return subprocess.run(
        [sys.executable, "-m", "memdoor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=home,
    )


def test_solve_json_prints_one_object_and_trace_reads_it_back_in_another_process(home):
    run = memdoor(
        home,
        "solve",
        "problems.yaml",
        "--problem",
        "add",
        "--strategy",
        "parallel",
        "--agents",
        "3",
        "--model",
        "scripted:good.json",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)  # exactly one JSON object: anything else fails to parse
    assert set(result) >= JSON_KEYS
    assert result["passed"] is True and result["strategy"] == "parallel:3" and result["oracle"] is True
    assert result["verdict"] == {"status": "passed", "tests_passed": 4, "tests_total": 4}
    assert result["graded_on"] == "public+hidden" and "return a + b" in result["code"]
    ledger = result["ledger"]
    assert ledger["calls"] == 3 and ledger["prompt_tokens"] > 0 and ledger["completion_tokens"] > 0
    assert ledger["wall_seconds"] > 0 and ledger["usd"] is None  # scripted models are unpriced
    assert len(result["agents"]) == 3 and 0 < result["confidence"] <= 1

    trace = memdoor(home, "trace", result["trace_id"])
    assert trace.returncode == 0, trace.stderr
    out = trace.stdout
    assert result["trace_id"] in out and "strategy parallel:3" in out
    assert out.count("asked to draft") == 3 and "chosen by majority" in out and "PASSED 4/4 tests" in out
    as_json = json.loads(memdoor(home, "trace", result["trace_id"], "--json").stdout)
    assert as_json["final"]["trace_id"] == result["trace_id"]


def test_readable_summary_and_exit_code_when_the_answer_fails(home):
    run = memdoor(home, "solve", "problems.yaml", "--problem", "add", "--model", "scripted:overfit.json")
    assert run.returncode == 1
    assert "FAILED (wrong_answer, 2/4 tests; graded on public and hidden tests)" in run.stdout
    assert "public tests: passed" in run.stdout  # the team saw its public tests pass; the hidden ones failed
    assert "memdoor trace " in run.stdout and "return 3 if a == 1 else 4" in run.stdout


def test_a_problem_without_hidden_tests_says_it_was_graded_on_public_tests(home):
    run = memdoor(
        home, "solve", "problems.yaml", "--problem", "add-public-only", "--model", "scripted:good.json"
    )
    assert run.returncode == 0 and "public tests only: this problem has no hidden tests" in run.stdout
    run = memdoor(
        home,
        "solve",
        "problems.yaml",
        "--problem",
        "add-public-only",
        "--model",
        "scripted:good.json",
        "--json",
    )
    assert json.loads(run.stdout)["graded_on"] == "public"


def test_mixed_team_and_options(home):
    run = memdoor(
        home,
        "solve",
        "problems.yaml",
        "--problem",
        "add",
        "--strategy",
        "hybrid:4",
        "--model",
        "scripted:overfit.json",
        "--model",
        "scripted:good.json",
        "--option",
        "repair_rounds=1",
        "--option",
        "inputs=0",
        "--json",
    )
    result = json.loads(run.stdout)
    assert [a.split("=", 1)[1] for a in result["agents"]] == [
        "scripted:overfit.json",
        "scripted:good.json",
    ] * 2
    assert result["oracle"] is True  # a correct candidate was among them, whichever the vote took


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--strategy", "swarm"], "unknown strategy 'swarm'"),
        (["--strategy", "parallel:3", "--agents", "2"], "disagree on the team size"),
        (["--model", "nosuch:x"], "bad model spec 'nosuch:x'"),
        (["--option", "rounds=2", "--strategy", "parallel"], "bad options for strategy parallel"),
        (["--option", "rounds"], "expected KEY=VALUE"),
        (["--problem", "nope"], "no problem 'nope'"),
        (["--budget-tokens", "0"], "--budget-tokens: must be at least 1"),
        (["--vote-k", "0"], "--vote-k: must be at least 1"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(home, args, message):
    base = ["solve", "problems.yaml", "--model", "scripted:good.json"]
    if "--problem" not in args:
        base += ["--problem", "add"]
    run = memdoor(home, *base, *args)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdoor: ") and message in lines[0], run.stderr


def test_a_file_of_several_problems_needs_problem_id(home):
    run = memdoor(home, "solve", "problems.yaml", "--model", "scripted:good.json")
    assert run.returncode == 2 and "choose one with --problem ID" in run.stderr


def test_unknown_trace_id(home):
    run = memdoor(home, "trace", "0123456789abcdef")
    assert run.returncode == 2 and "no trace '0123456789abcdef'" in run.stderr


def test_solve_over_redis_with_a_worker_process(home, redis_url):
    """--redis: model calls go to a real `memdoor worker` process; the trace is read back from Redis."""
    import asyncio

    from memdoor.memory import open_memory

    url = redis_url.rsplit("/", 1)[0] + "/13"  # a database of our own on the test server
    spec = "scripted:" + str(home / "good.json")  # a model no other worker serves
    with (home / "worker.log").open("w") as log:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memdoor",
                "worker",
                "--redis",
                url,
                "--agent-id",
                f"w{os.getpid()}",
                "--model",
                spec,
                "--role",
                "answer",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "MEMDOOR_HOME": str(home / "mdhome")},
        )
        try:
            run = memdoor(
                home,
                "solve",
                "problems.yaml",
                "--problem",
                "add",
                "--strategy",
                "parallel:2",
                "--model",
                spec,
                "--redis",
                url,
                "--json",
            )
            trace = memdoor(
                home, "trace", json.loads(run.stdout or "{}").get("trace_id", "x"), "--redis", url
            )
        finally:
            worker.terminate()
            worker.wait(60)
    assert run.returncode == 0, run.stderr + (home / "worker.log").read_text()
    result = json.loads(run.stdout)
    assert result["passed"] is True and result["ledger"]["calls"] == 2
    assert trace.returncode == 0 and trace.stdout.count("asked to draft") == 2 and "PASSED" in trace.stdout

    async def cleanup() -> None:
        memory = open_memory(url)
        await memory.delete(result["trace_id"])
        await memory.aclose()

    asyncio.run(cleanup())


def test_live_view_follows_the_team():
    """The view `solve` shows on a terminal: who does what, their results, the vote and the outcome."""
    import io

    from rich.console import Console

    from memdoor.core.trace import Trace
    from memdoor.run.live import LiveView

    trace, out = Trace(), io.StringIO()
    view = LiveView("add — parallel:2", console=Console(file=out, width=200, force_terminal=False))
    steps = [
        ("strategy", None, {"name": "parallel", "team": ["agent0=m", "agent1=m"]}),
        ("call", "agent0", {"role": "draft", "n": 1}),
        ("call", "agent1", {"role": "review", "n": 1}),
    ]
    for kind, agent, data in steps:
        view.on_event(trace.add(kind, agent, **data))
    assert view.agents["agent0"].doing == "drafting" and view.agents["agent1"].doing == "reviewing"
    for kind, agent, data in [
        ("answer", "agent0", {"role": "draft", "tokens": 120, "seconds": 1.5}),
        ("draft", "agent0", {"round": 0, "code": "x", "status": "wrong_answer", "passed": 1, "total": 2}),
        ("failure", "agent1", {"role": "review", "error": "ModelTimeout: slow"}),
        (
            "vote",
            None,
            {
                "index": 0,
                "chosen_agent": "agent0",
                "reason": "no-survivor",
                "rule": "only-one",
                "confidence": 1.0,
                "groups": [[0]],
                "survivors": [],
            },
        ),
        (
            "graded",
            None,
            {
                "passed": False,
                "status": "wrong_answer",
                "tests_passed": 1,
                "tests_total": 4,
                "hidden_tests": 2,
                "oracle": False,
            },
        ),
    ]:
        view.on_event(trace.add(kind, agent, **data))
    a0, a1 = view.agents["agent0"], view.agents["agent1"]
    assert (a0.doing, a0.last, a0.tokens, a0.calls) == (
        "idle",
        "1/2 public tests passed (wrong_answer)",
        120,
        1,
    )
    assert a1.doing == "FAILED"
    assert "agent0 chosen by only-one, no-survivor" in view.vote and view.outcome.startswith(
        "FAILED 1/4 tests"
    )
    with view:
        pass
    shown = out.getvalue()
    assert "agent0" in shown and "FAILED" in shown and "vote:" in shown
