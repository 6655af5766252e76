"""Loader for LiveCodeBench ``code_generation_lite`` rows (JSON Lines, official field names)."""

from __future__ import annotations

import base64
import binascii
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memdoor.core.errors import ProblemFormatError, first_problem
from memdoor.core.problem import Problem, TestCase
from memdoor.problems.inflate import inflate
from memdoor.problems.jsonl import iter_objects, parse_json
from memdoor.problems.safepickle import loads_str

REQUIRED = ("question_id", "question_content", "public_test_cases", "private_test_cases")
TEST_KINDS = ("stdin", "functional")


def decode_tests(field: Any) -> list[dict[str, Any]]:
    """A test-case field: plain JSON, or base64 → zlib → pickled str → JSON. ValueError when neither.

    The decompression is bounded (:mod:`memdoor.problems.inflate`): a field that would expand past its
    limit is refused as soon as it reaches it.
    """
    if isinstance(field, list):
        return field
    if not isinstance(field, str):
        raise ValueError(f"expected a JSON string, got {type(field).__name__}")
    try:
        value = parse_json(field)
    except ValueError as e:
        if field.lstrip().startswith(("[", "{")):  # meant as JSON (base64 never starts so)
            raise ValueError(f"not JSON ({e})") from None
        try:
            raw = base64.b64decode(field.encode(), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("neither JSON nor base64") from None
        try:
            data = inflate(raw)
        except ValueError as e:
            raise ValueError(f"base64 but {e}") from None
        text = loads_str(data)
        del data
        try:
            value = parse_json(text)
        except ValueError as e:
            raise ValueError(f"decompressed tests are not JSON ({e})") from None
    if not isinstance(value, list):
        raise ValueError(f"tests must be a JSON list, got {type(value).__name__}")
    return value


def _tests(field: Any, where: tuple[str, int, str]) -> list[TestCase]:
    path, line, name = where
    try:
        raw = decode_tests(field)
    except ValueError as e:
        raise ProblemFormatError(path, line, name, str(e)) from None
    tests = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict) or "input" not in t or "output" not in t:
            raise ProblemFormatError(path, line, f"{name}[{i}]", "a test needs 'input' and 'output'")
        kind = t.get("testtype", "stdin")
        if kind not in TEST_KINDS:
            raise ProblemFormatError(
                path,
                line,
                f"{name}[{i}].testtype",
                f"unknown test type {kind!r} (expected stdin or functional)",
            )
        if not isinstance(t["input"], str) or not isinstance(t["output"], str):
            raise ProblemFormatError(path, line, f"{name}[{i}]", "'input' and 'output' must be strings")
        tests.append(TestCase(kind=kind, input=t["input"], output=t["output"]))
    return tests


def _date(value: Any) -> date | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value)).date()
    except ValueError:
        return None


def _text(row: dict[str, Any], name: str, where: tuple[str, int]) -> str | None:
    """An optional text field: a string (or a number, as ids are), else None when absent or empty."""
    value = row.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ProblemFormatError(*where, name, f"must be a string, got {type(value).__name__}")
    return str(value)


def _func_name(meta: dict[str, Any], where: tuple[str, int]) -> str | None:
    value = meta.get("func_name")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.isidentifier():
        shown = repr(value) if isinstance(value, str | int | float) else type(value).__name__
        raise ProblemFormatError(*where, "metadata.func_name", f"must be a Python identifier, got {shown}")
    return value


def problem_from_row(row: dict[str, Any], path: str = "<row>", line: int = 1) -> Problem:
    """One ``code_generation_lite`` row → Problem. Raises ProblemFormatError naming file, line and field.

    A row must have at least one test (public or private): a problem with nothing to grade would pass
    any program, so it is refused here rather than graded.
    """
    where = (path, line)
    for name in REQUIRED:
        if name not in row:
            raise ProblemFormatError(path, line, name, "missing field")
    qid = _text(row, "question_id", where)
    if qid is None or not qid.strip():
        raise ProblemFormatError(path, line, "question_id", "empty")
    statement = _text(row, "question_content", where)
    if statement is None or not statement.strip():
        raise ProblemFormatError(path, line, "question_content", "empty")
    meta_raw = row.get("metadata") or "{}"
    try:
        meta = parse_json(meta_raw) if isinstance(meta_raw, str) else meta_raw
    except ValueError as e:
        raise ProblemFormatError(path, line, "metadata", f"not a JSON object ({e})") from None
    if not isinstance(meta, dict):
        raise ProblemFormatError(path, line, "metadata", "not a JSON object")
    func_name = _func_name(meta, where)
    public = _tests(row["public_test_cases"], (path, line, "public_test_cases"))
    hidden = _tests(row["private_test_cases"], (path, line, "private_test_cases"))
    if not public and not hidden:
        raise ProblemFormatError(
            path, line, "public_test_cases", "no tests (public and private are both empty): nothing to grade"
        )
    kinds = {t.kind for t in public + hidden}
    if len(kinds) > 1:
        raise ProblemFormatError(path, line, "public_test_cases", "tests mix stdin and functional types")
    if "functional" in kinds and not func_name:
        raise ProblemFormatError(path, line, "metadata", "functional tests need metadata.func_name")
    try:
        return Problem(
            id=qid,
            title=_text(row, "question_title", where) or "",
            statement=statement,
            starter_code=_text(row, "starter_code", where) or "",
            func_name=func_name,
            public_tests=public,
            hidden_tests=hidden,
            prelude="livecodebench",
            difficulty=_text(row, "difficulty", where),
            platform=_text(row, "platform", where),
            release_date=_date(row.get("contest_date")),
            source=path,
        )
    except ValidationError as e:  # a field the checks above let through (kept as a last lock)
        field, msg = first_problem(e)
        raise ProblemFormatError(path, line, field or None, msg) from None


def load_jsonl(path: str | Path) -> list[Problem]:
    """Every row of a LiveCodeBench JSON Lines file. Blank lines are skipped."""
    return [problem_from_row(row, str(path), line_no) for line_no, row in iter_objects(path)]
