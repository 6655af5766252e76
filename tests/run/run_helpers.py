"""Helpers for the runner tests: a small problem with hidden tests, answers, an environment."""

from __future__ import annotations

from memdoor.core.problem import Problem, TestCase
from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.run.env import RunEnv

STARTER = "class Solution:\n    def add(self, a: int, b: int) -> int:\n        "
GOOD = "class Solution:\n    def add(self, a, b):\n        return a + b"
OVERFIT = "class Solution:\n    def add(self, a, b):\n        return 3 if a == 1 else 4"


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def problem(hidden: bool = True) -> Problem:
    tc = lambda i, o: TestCase(kind="functional", input=i, output=o)  # noqa: E731
    return Problem(
        id="add-two",
        statement="Return a + b.",
        starter_code=STARTER,
        func_name="add",
        public_tests=[tc("1\n2", "3"), tc("2\n2", "4")],
        hidden_tests=[tc("0\n5", "5"), tc("-3\n1", "-2")] if hidden else [],
        prelude="livecodebench",
    )


def env_with(sandbox, tmp_path, *models, **kw) -> RunEnv:
    pool = ModelPool()
    for m in models:
        pool.add(m.spec, m)
    return RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path, **kw)
