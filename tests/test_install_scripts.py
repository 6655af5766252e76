"""The first command never waits on an optional part: with a Rust toolchain that cannot be installed (here,
rustup with no default toolchain), ``scripts/demo.sh`` installs, warns, and runs the demo to its end."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

RUSTUP_ERROR = """#!/bin/sh
echo "error: rustup could not choose a version of $(basename "$0") to run, because one wasn't specified \
explicitly, and no default is configured." >&2
exit 1
"""

ONE_PROBLEM = """
problems:
  - id: add
    title: Add
    difficulty: easy
    function: add
    statement: Return a + b.
    tests:
      - {args: [1, 2], expected: 3}
    hidden_tests:
      - {args: [10, -4], expected: 6}
"""


@pytest.mark.skipif(not (REPO / ".venv" / "bin" / "memdoor").exists(), reason="needs the installed .venv")
def test_the_demo_runs_where_rust_cannot_be_installed(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("rustc", "cargo"):
        (bin_dir / tool).write_text(RUSTUP_ERROR)
        (bin_dir / tool).chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    problems = tmp_path / "problems.yaml"
    problems.write_text(ONE_PROBLEM)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answers": ["```python\ndef add(a, b):\n    return a + b\n```"]}))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        ["bash", "scripts/demo.sh", "--model", f"scripted:{answers}", "--problems", str(problems),
         "--team", "parallel:2"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rustup could not choose" in done.stderr, "the Rust installer was really tried, and failed"
    assert "WARNING: the Rust toolchain for the sandbox could not be installed" in done.stderr
    assert "single agent 1/1, team 1/1" in done.stdout
    assert "The full benchmark (" in done.stdout or "BENCHMARKS.md" in done.stdout
