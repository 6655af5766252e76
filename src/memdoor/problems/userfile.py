"""Loader for users' own problems: YAML or JSON files, one problem or a list.

Format (YAML shown; JSON has the same fields)::

    id: add-two                # required, unique
    title: Add two numbers     # optional
    statement: |               # required: what the agents read
      Read two integers and print their sum.
    starter_code: ""           # optional
    function: add              # optional: makes the tests function calls
    difficulty: easy           # optional
    tests:                     # public tests, shown to agents
      - {input: "1 2\\n", output: "3\\n"}        # stdin tests: input text → expected stdout
    hidden_tests:              # optional: grading only, never shown to agents
      - {input: "10 -4\\n", output: "6\\n"}

With ``function``, a test is ``{args: [1, 2], expected: 3}`` (arguments and result as JSON values);
the candidate defines that function (or a ``class Solution`` method of that name). A file may hold
one problem, a list of problems, or ``{problems: [...]}``. Every problem needs at least one test
(public or hidden): a problem with nothing to grade would pass any program. YAML aliases (``*name``)
are refused, so a small file cannot expand into a huge one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from memdoor.core.errors import ProblemFormatError, first_problem
from memdoor.core.problem import Problem, TestCase
from memdoor.problems.jsonl import parse_json

SUFFIXES = (".yaml", ".yml", ".json")
_KNOWN = {
    "id",
    "title",
    "statement",
    "starter_code",
    "function",
    "difficulty",
    "platform",
    "tests",
    "hidden_tests",
    "release_date",
}


class _NoAliasLoader(yaml.SafeLoader):
    """yaml.safe_load without aliases: ``*a`` repeated inside lists of ``*a`` grows exponentially."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", mark)
        return super().compose_node(parent, index)


def _parse(text: str, suffix: str) -> Any:
    """The file's data; ValueError or yaml.YAMLError when it cannot be read."""
    if suffix == ".json":
        return parse_json(text)
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # a SafeLoader, without aliases
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _optional_text(raw: dict[str, Any], field: str, label: str) -> str | None:
    value = raw.get(field)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ProblemFormatError(label, None, field, f"must be text, got {type(value).__name__}")
    return str(value)


def _test(raw: Any, func: str | None, where: tuple[str, str]) -> TestCase:
    path, field = where
    if not isinstance(raw, dict):
        raise ProblemFormatError(path, None, field, "a test must be a mapping")
    if func:
        if "args" not in raw or "expected" not in raw:
            raise ProblemFormatError(
                path, None, field, "a function test needs 'args' (a list) and 'expected'"
            )
        if not isinstance(raw["args"], list):
            raise ProblemFormatError(path, None, f"{field}.args", "must be a list of arguments")
        try:
            return TestCase(
                kind="functional",
                input="\n".join(json.dumps(a) for a in raw["args"]),
                output=json.dumps(raw["expected"]),
            )
        except (TypeError, ValueError) as e:
            raise ProblemFormatError(path, None, field, f"arguments must be JSON values ({e})") from None
    if "input" not in raw or "output" not in raw:
        raise ProblemFormatError(path, None, field, "a stdin test needs 'input' and 'output'")
    if not isinstance(raw["input"], str) or not isinstance(raw["output"], str):
        raise ProblemFormatError(path, None, field, "'input' and 'output' must be strings")
    return TestCase(kind="stdin", input=raw["input"], output=raw["output"])


def problem_from_mapping(raw: Any, path: str, index: int | None = None) -> Problem:
    label = path if index is None else f"{path}: problem {index}"
    if not isinstance(raw, dict):
        raise ProblemFormatError(label, None, None, "a problem must be a mapping")
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise ProblemFormatError(
            label, None, unknown[0], f"unknown field (known: {', '.join(sorted(_KNOWN))})"
        )
    for field in ("id", "statement"):
        if not isinstance(raw.get(field), str | int) or not str(raw[field]).strip():
            raise ProblemFormatError(label, None, field, "missing or empty")
    func = raw.get("function")
    if func is not None and (not isinstance(func, str) or not func.isidentifier()):
        raise ProblemFormatError(label, None, "function", "must be a Python identifier")
    tests = {}
    for field in ("tests", "hidden_tests"):
        items = raw.get(field) or []
        if not isinstance(items, list):
            raise ProblemFormatError(label, None, field, "must be a list")
        tests[field] = [_test(t, func, (label, f"{field}[{i}]")) for i, t in enumerate(items)]
    if not tests["tests"] and not tests["hidden_tests"]:
        raise ProblemFormatError(
            label, None, "tests", "no tests (tests and hidden_tests are both empty): nothing to grade"
        )
    try:
        return Problem(
            id=str(raw["id"]),
            title=_optional_text(raw, "title", label) or str(raw["id"]),
            statement=str(raw["statement"]),
            starter_code=_optional_text(raw, "starter_code", label) or "",
            func_name=func,
            public_tests=tests["tests"],
            hidden_tests=tests["hidden_tests"],
            difficulty=_optional_text(raw, "difficulty", label),
            platform=_optional_text(raw, "platform", label) or "user",
            release_date=raw.get("release_date"),
            source=path,
        )
    except ValidationError as e:
        field, msg = first_problem(e)
        raise ProblemFormatError(label, None, field or None, msg) from None


def load_file(path: str | Path) -> list[Problem]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ProblemFormatError(str(path), None, None, f"cannot read: {e}") from None
    try:
        data = _parse(text, path.suffix)
    except (ValueError, yaml.YAMLError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ProblemFormatError(
            str(path), None, None, f"not valid {path.suffix[1:].upper()}: {reason}"
        ) from None
    if isinstance(data, dict) and "problems" in data:
        data = data["problems"]
    if isinstance(data, list):
        return [problem_from_mapping(item, str(path), i) for i, item in enumerate(data)]
    return [problem_from_mapping(data, str(path))]


def load_dir(path: str | Path) -> list[Problem]:
    files = sorted(p for p in Path(path).iterdir() if p.suffix in SUFFIXES and p.is_file())
    if not files:
        raise ProblemFormatError(str(path), None, None, f"no problem files ({', '.join(SUFFIXES)}) in folder")
    return [p for f in files for p in load_file(f)]
