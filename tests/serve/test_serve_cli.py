"""``memdoor serve`` as a command: refusals with exit code 2, and a real server process over HTTP."""

from __future__ import annotations

import json
import os
import signal

import openai
import pytest
from serve_helpers import ADD_PROMPT, GOOD, WAIT, ServerProcess, fenced, user

from memdoor.cli import main


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--host", "0.0.0.0"], "without a token"),
        (["--team", "memdoor/parallel"], "give the team size"),
        (["--team", "memdoor/swarm-3"], "unknown strategy"),
        (["--option", "hybrid.nonsense=1"], "bad options for strategy hybrid"),
        (["--option", "rounds=2"], "STRATEGY.KEY=VALUE"),
        (["--timeout", "-5"], "--timeout"),
        (["--model", "nosuch:thing"], "bad model spec"),
    ],
)
def test_refusals_exit_2_with_a_message(argv, says, capsys, monkeypatch):
    monkeypatch.delenv("MEMDOOR_SERVE_TOKEN", raising=False)
    code = main(
        ["serve", "--port", "0", *argv] + ([] if "--model" in argv else ["--model", "scripted:/dev/null"])
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("memdoor: ") and says in err
    assert "Traceback" not in err


def test_a_server_process_answers_and_stops_on_sigterm(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([fenced(GOOD)]))
    env = {**os.environ, "MEMDOOR_SERVE_TOKEN": "from-env", "MEMDOOR_HOME": str(tmp_path)}
    server = ServerProcess(
        ["--model", f"scripted:{answers}", "--team", "single", "--team", "parallel:2"], env
    )
    try:
        base = f"http://127.0.0.1:{server.port}/v1"
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=base, api_key="wrong", max_retries=0).models.list()
        c = openai.OpenAI(base_url=base, api_key="from-env", max_retries=0, timeout=WAIT)
        assert [m.id for m in c.models.list()] == ["memdoor/single", "memdoor/parallel-2"]
        answer = c.chat.completions.create(model="memdoor/parallel-2", messages=user(ADD_PROMPT))
        assert answer.choices[0].message.content == f"```python\n{GOOD}\n```"
    finally:
        server.proc.send_signal(signal.SIGTERM)
        code = server.proc.wait(WAIT)
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after a graceful shutdown
    server.reader.join(WAIT)  # everything the process wrote has been read
    rest = server.drained()
    assert any("Application shutdown complete" in line for line in rest)
