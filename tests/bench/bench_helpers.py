"""Helpers for the bench tests: a small problem file, scripted answers, a CLI runner."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

PROBLEMS_YAML = """
problems:
  - id: add
    title: Add
    difficulty: easy
    platform: leetcode
    release_date: 2024-01-05
    function: add
    statement: Return a + b.
    tests:
      - {args: [1, 2], expected: 3}
    hidden_tests:
      - {args: [10, -4], expected: 6}
      - {args: [0, 0], expected: 0}
  - id: mul
    title: Multiply
    difficulty: medium
    platform: leetcode
    release_date: 2024-02-10
    function: mul
    statement: Return a * b.
    tests:
      - {args: [2, 3], expected: 6}
    hidden_tests:
      - {args: [-2, 5], expected: -10}
  - id: neg
    title: Negate
    difficulty: hard
    platform: atcoder
    release_date: 2024-03-15
    function: neg
    statement: Return -a.
    tests:
      - {args: [0], expected: 0}
    hidden_tests:
      - {args: [7], expected: -7}
  - id: sub
    title: Subtract
    difficulty: easy
    platform: atcoder
    release_date: 2024-03-20
    function: sub
    statement: Return a - b.
    tests:
      - {args: [5, 3], expected: 2}
    hidden_tests:
      - {args: [3, 5], expected: -2}
  - id: square
    title: Square
    difficulty: medium
    platform: leetcode
    release_date: 2024-04-01
    function: square
    statement: Return a * a.
    tests:
      - {args: [3], expected: 9}
    hidden_tests:
      - {args: [-4], expected: 16}
  - id: double
    title: Double
    difficulty: easy
    platform: leetcode
    release_date: 2024-04-20
    function: double
    statement: Return 2 * a.
    tests:
      - {args: [3], expected: 6}
    hidden_tests:
      - {args: [-4], expected: -8}
"""

ALL_FUNCTIONS = """```python
def add(a, b):
    return a + b

def mul(a, b):
    return a * b

def neg(a):
    return a  # wrong unless a == 0: passes the public test, fails the hidden one

def sub(a, b):
    return a - b

def square(a):
    return a * a

def double(a):
    return a + a
```"""
"""One answer that defines every function: add, mul, sub, square, double pass; neg fails."""

EXPECTED_SOLVED = {"add", "mul", "sub", "square", "double"}


def answers_file(directory: Path, answers: list[str], delay: float = 0.0, name: str = "answers.json") -> Path:
    path = directory / name
    path.write_text(json.dumps({"answers": answers, "delay": delay}))
    return path


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m memdoor ARGS`` in a subprocess (stdin closed, output captured)."""
    return subprocess.run(
        [sys.executable, "-m", "memdoor", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def kill_once_stored(cmd: list[str], stored: Callable[[], int], at_least: int = 3) -> None:
    """Start ``cmd`` and SIGKILL it as soon as ``stored()`` counts ``at_least`` stored rows."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while stored() < at_least:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the bench stored nothing"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc.stderr.close()
