"""Issue 11, item 1 in a distributed `parallel` team (real Redis, real `memdoor worker` processes, scripted
models): one agent's candidate breaks the sandbox harness's protocol; the team still answers with the other
agent's correct code instead of turning the run into an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import redis
from dist_helpers import SRC, RedisServer, WorkerProc, scripted_file, wait_for

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "problems.yaml"
RIGHT = "```python\ndef sum_digits(n: int) -> int:\n    return sum(int(d) for d in str(n))\n```"
# sum-of-digits' public tests are 407 -> 11 and 0 -> 0: at n == 0 (test 1, the last) the candidate sends
# that test's result itself, so the harness's own result is one frame more than the tests (an IndexError
# out of the sandbox before issue 11).
HOSTILE = (
    "```python\n"
    "import json, os, struct, sys\n"
    "def sum_digits(n: int) -> int:\n"
    "    if n == 0:\n"
    "        h = json.dumps({'ev': 'res', 'i': 1, 'status': 'ok', 't': 0.0}).encode()\n"
    "        os.write(int(sys.argv[1]), struct.pack('>II', len(h), 1) + h + b'0')\n"
    "    return sum(int(d) for d in str(n))\n"
    "```"
)


def test_a_hostile_agents_candidate_does_not_cost_the_team_its_answer(tmp_path):
    server = RedisServer(tmp_path).start()
    hostile = scripted_file(tmp_path / "hostile.json", [HOSTILE])
    right = scripted_file(tmp_path / "right.json", [RIGHT])
    procs = [
        WorkerProc(tmp_path, "h1", hostile, server.url, role="answer"),
        WorkerProc(tmp_path, "r1", right, server.url, role="answer"),
    ]
    try:
        r = redis.Redis(host="127.0.0.1", port=server.port)
        wait_for(lambda: r.hlen("memdoor:agents") == 2, 120, "workers", procs=procs)
        args = ["solve", str(EXAMPLES), "--problem", "sum-of-digits", "--strategy", "parallel:2"]
        args += ["--model", hostile, "--model", right, "--redis", server.url, "--json"]
        done = subprocess.run(
            [sys.executable, "-m", "memdoor", *args],
            capture_output=True,
            text=True,
            timeout=300,
            env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            cwd=tmp_path,
        )
    finally:
        for p in procs:
            p.stop()
        server.stop()
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["error"] is None and result["passed"] is True, result
    assert result["agent"] == "agent1" and "os.write" not in result["code"], result
    assert result["verdict"]["status"] == "passed" and result["verdict"]["tests_total"] == 6
