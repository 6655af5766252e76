"""``memdoor serve`` as a command: refusals with exit code 2, and a real server process over HTTP."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import openai
import pytest
from serve_helpers import ADD_PROMPT, GOOD, WAIT, fenced, user

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


class ServerProcess:
    """``memdoor serve`` in a subprocess on a free port; the port is read from uvicorn's startup line."""

    def __init__(self, args: list[str], env: dict[str, str]):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdoor", "serve", "--port", "0", "--no-traces", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.port = self._wait_port()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def _wait_port(self) -> int:
        seen: list[str] = []
        deadline = time.monotonic() + WAIT
        while True:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    raise AssertionError(f"memdoor serve did not start: {''.join(seen)}") from None
                continue
            seen.append(line)
            m = re.search(r"running on http://127\.0\.0\.1:(\d+)", line)
            if m:
                return int(m.group(1))


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
    rest = []
    while not server.lines.empty():
        rest.append(server.lines.get())
    assert any("Application shutdown complete" in line for line in rest)
