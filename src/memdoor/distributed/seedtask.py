"""A seed-protocol task (the JSON a client sets at ``task:<id>``) and the :class:`Problem` made from it.

The task is ``{"id", "prompt"}`` plus, optionally:

- ``tests``: a list of ``{"input", "output"}`` — for a function, ``input`` is the list of arguments
  (or JSON lines, one argument each) and ``output`` the expected return value; for a program, both
  are text (stdin and expected stdout) — or a string of Python ``assert`` lines calling the function;
- ``strategy`` (``parallel``, ``sequential:3``...), ``agents`` (team size), ``models`` (specs served
  by live workers), ``func_name`` (when the prompt does not name the function clearly).

The function to write is taken from the prompt (```is_palindrome(s: str) -> bool``` gives the
name and, when it parses, the signature as starter code); a prompt naming no function is a program
reading stdin.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memdoor.core.errors import ProblemFormatError, first_problem
from memdoor.core.limits import MAX_AGENTS
from memdoor.core.problem import Problem, TestCase
from memdoor.problems.jsonl import parse_json
from memdoor.problems.prompt_examples import find_target


class SeedTask(BaseModel):
    """What a client set at ``task:<id>``."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, description="Task id; must match the key's <id>.")
    prompt: str = Field(min_length=1, description="The problem, in words.")
    tests: list[dict[str, Any]] | str | None = Field(
        default=None, description="Optional tests (see module docs)."
    )
    strategy: str | None = Field(default=None, description="Strategy name, optionally NAME:AGENTS.")
    agents: int | None = Field(default=None, ge=1, le=MAX_AGENTS, description="Team size.")
    models: list[str] | None = Field(
        default=None, max_length=MAX_AGENTS, description="Model specs for the team (served by workers)."
    )
    func_name: str | None = Field(default=None, description="Function to write, when the prompt is unclear.")

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


def parse_task(key_id: str, raw: bytes | str | None, *, key: str) -> SeedTask:
    """The task stored at ``key`` (whose id part is ``key_id``); ProblemFormatError naming the field."""
    if raw is None:
        raise ProblemFormatError(key, None, None, "the task disappeared")
    try:
        data = parse_json(raw)
    except ValueError as e:  # not JSON, not UTF-8, or nested too deeply
        raise ProblemFormatError(key, None, None, f"not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ProblemFormatError(key, None, None, f"a task must be a JSON object, not {type(data).__name__}")
    try:
        task = SeedTask.model_validate(data)
    except ValidationError as e:
        field, msg = first_problem(e)
        raise ProblemFormatError(key, None, field or None, msg) from None
    if task.id != key_id:
        raise ProblemFormatError(key, None, "id", f"{task.id!r} does not match the key's id {key_id!r}")
    return task


def find_function(prompt: str) -> tuple[str | None, str]:
    """``(name, starter code)`` of the function a prompt asks for; ``(None, "")`` for none.

    The same reading as ``memdoor serve`` (:func:`memdoor.problems.prompt_examples.find_target`).
    """
    target = find_target(prompt)
    return target.func_name, target.starter


def _functional(test: dict[str, Any], i: int, key: str) -> TestCase:
    args = test.get("input")
    if isinstance(args, list):
        text = "\n".join(json.dumps(a, ensure_ascii=False) for a in args)
    elif isinstance(args, str):
        text = args
        try:
            for line in text.splitlines():
                if line.strip():
                    parse_json(line)
        except ValueError:
            raise ProblemFormatError(
                key, None, f"tests.{i}.input", "a string input must be JSON lines"
            ) from None
    else:
        raise ProblemFormatError(key, None, f"tests.{i}.input", "must be a list of arguments or JSON lines")
    if "output" not in test:
        return TestCase(kind="functional", input=text, output=None)
    return TestCase(kind="functional", input=text, output=json.dumps(test["output"], ensure_ascii=False))


def _stdin(test: dict[str, Any], i: int, key: str) -> TestCase:
    inp, out = test.get("input"), test.get("output")
    if not isinstance(inp, str):
        raise ProblemFormatError(key, None, f"tests.{i}.input", "must be text (the program's stdin)")
    if out is not None and not isinstance(out, str):
        raise ProblemFormatError(key, None, f"tests.{i}.output", "must be text (the expected stdout)")
    return TestCase(kind="stdin", input=inp, output=out)


def _asserts(code: str, func_name: str | None, key: str) -> TestCase:
    if not func_name:
        raise ProblemFormatError(key, None, "tests", "assert tests need a function (name it in the prompt)")
    body = re.sub(rf"\b{re.escape(func_name)}\s*\(", "candidate(", code.strip())
    source = "def check(candidate):\n" + "\n".join("    " + line for line in body.splitlines()) + "\n"
    try:
        ast.parse(source)
    except SyntaxError as e:
        raise ProblemFormatError(key, None, "tests", f"assert tests are not valid Python ({e.msg})") from None
    return TestCase(kind="check", input=source)


def task_problem(task: SeedTask, *, key: str) -> Problem:
    """The problem a task describes, with the task's tests (if any) as public tests."""
    name, starter = find_function(task.prompt)
    if task.func_name:
        name, starter = task.func_name, starter if task.func_name == name else ""
    tests: list[TestCase] = []
    if isinstance(task.tests, str):
        tests = [_asserts(task.tests, name, key)]
    elif task.tests:
        make = _functional if name else _stdin
        tests = [make(t, i, key) for i, t in enumerate(task.tests)]
    return Problem(
        id=task.id,
        title=task.id,
        statement=task.prompt,
        starter_code=starter,
        func_name=name,
        public_tests=tests,
        prelude="livecodebench",
        platform="user",
        source=key,
    )
