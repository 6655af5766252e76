"""The Python driver's calls process under a CPU-time limit lower than the sandbox's: a batch of cheap
calls whose CPU adds up past the limit gives every call its own result, and a call that alone exceeds the
limit is still that call's failure.

The sandbox's own limit grows with the batch (``timeout_s`` a test, plus some), so these tests run the
driver program as the harness runs a standard-input program (a fresh ``__main__`` per test, in one
process whose limits the calls' process inherits) with a 1 s limit instead."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memdoor.review.differential.driver import CallOutcome, from_mark, program
from memdoor.review.differential.seal import new_nonce, results

LIMIT_S = 1
"""The RLIMIT_CPU of the harness (and so of the calls' process), in seconds."""

BURN = """import time


def burn(n, seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return n * n
"""

HARNESS = """import io, json, resource, sys
resource.setrlimit(resource.RLIMIT_CPU, ({limit}, {limit}))
code = compile(open(sys.argv[1], encoding="utf-8").read(), "<candidate>", "exec")
for text in json.load(open(sys.argv[2], encoding="utf-8")):
    out, saved = io.StringIO(), (sys.stdin, sys.stdout)
    sys.stdin, sys.stdout = io.StringIO(text), out
    try:
        exec(code, {"__name__": "__main__"})
    finally:
        sys.stdin, sys.stdout = saved
    print(json.dumps(out.getvalue()), flush=True)
"""


def run(tmp_path: Path, seconds: list[float]) -> list[CallOutcome]:
    """``burn(k, seconds[k])`` for each k, one test each, in one harness process with :data:`LIMIT_S`."""
    (tmp_path / "driver.py").write_text(program({"burn.py": BURN}, [""]))
    nonce = new_nonce()
    requests = [
        nonce + "\n" + json.dumps({"m": "burn", "f": "burn", "c": "function", "a": f"[{k}, {s}]"})
        for k, s in enumerate(seconds)
    ]
    (tmp_path / "requests.json").write_text(json.dumps(requests))
    (tmp_path / "harness.py").write_text(HARNESS.replace("{limit}", str(LIMIT_S)))
    done = subprocess.run(
        [sys.executable, "harness.py", "driver.py", "requests.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(printed) == len(seconds)
    return [from_mark(json.loads(r[0]) if (r := results(p, nonce)) else None) for p in printed]


def test_cheap_calls_whose_cpu_adds_up_past_the_limit_each_return_their_value(tmp_path):
    found = run(tmp_path, [0.1] * 14)  # 1.4 s of CPU in all, under a 1 s limit
    assert [(o.kind, o.text) for o in found] == [("return", str(k * k)) for k in range(14)]


def test_a_call_that_alone_exceeds_the_limit_is_still_that_call_s_failure(tmp_path):
    seconds = [0.1] * 12 + [30.0, 0.1]
    found = run(tmp_path, seconds)
    heavy = found[12]
    assert heavy.kind == "crash" and heavy.text == "its process ended (signal 9)"
    assert [(o.kind, o.text) for k, o in enumerate(found) if k != 12] == [
        ("return", str(k * k)) for k in range(len(seconds)) if k != 12
    ]
