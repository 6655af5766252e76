"""Loader for LiveCodeBench ``code_generation_lite`` rows (JSON Lines, official field names)."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memdoor.errors import ProblemFormatError
from memdoor.problems.jsonl import iter_objects
from memdoor.problems.model import Problem, TestCase
from memdoor.problems.safepickle import loads_str

REQUIRED = ("question_id", "question_content", "public_test_cases", "private_test_cases")
TEST_KINDS = ("stdin", "functional")


def decode_tests(field: Any) -> list[dict[str, Any]]:
    """A test-case field: plain JSON, or base64 → zlib → pickled str → JSON. ValueError when neither."""
    if isinstance(field, list):
        return field
    if not isinstance(field, str):
        raise ValueError(f"expected a JSON string, got {type(field).__name__}")
    try:
        value = json.loads(field)
    except ValueError:
        try:
            raw = base64.b64decode(field.encode(), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("neither JSON nor base64") from None
        try:
            text = loads_str(zlib.decompress(raw))
        except zlib.error as e:
            raise ValueError(f"base64 but not zlib data ({e})") from None
        try:
            value = json.loads(text)
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


def problem_from_row(row: dict[str, Any], path: str = "<row>", line: int = 1) -> Problem:
    """One ``code_generation_lite`` row → Problem. Raises ProblemFormatError naming file, line and field."""
    for name in REQUIRED:
        if name not in row:
            raise ProblemFormatError(path, line, name, "missing field")
    meta_raw = row.get("metadata") or "{}"
    try:
        meta = json.loads(meta_raw) if isinstance(meta_raw, str) else dict(meta_raw)
    except (ValueError, TypeError) as e:
        raise ProblemFormatError(path, line, "metadata", f"not a JSON object ({e})") from None
    if not isinstance(meta, dict):
        raise ProblemFormatError(path, line, "metadata", "not a JSON object")
    public = _tests(row["public_test_cases"], (path, line, "public_test_cases"))
    hidden = _tests(row["private_test_cases"], (path, line, "private_test_cases"))
    func_name = meta.get("func_name")
    kinds = {t.kind for t in public + hidden}
    if len(kinds) > 1:
        raise ProblemFormatError(path, line, "public_test_cases", "tests mix stdin and functional types")
    if "functional" in kinds and not func_name:
        raise ProblemFormatError(path, line, "metadata", "functional tests need metadata.func_name")
    return Problem(
        id=str(row["question_id"]),
        title=str(row.get("question_title") or ""),
        statement=str(row["question_content"]),
        starter_code=str(row.get("starter_code") or ""),
        func_name=func_name,
        public_tests=public,
        hidden_tests=hidden,
        prelude="livecodebench",
        difficulty=(row.get("difficulty") or None),
        platform=(row.get("platform") or None),
        release_date=_date(row.get("contest_date")),
        source=path,
    )


def load_jsonl(path: str | Path) -> list[Problem]:
    """Every row of a LiveCodeBench JSON Lines file. Blank lines are skipped."""
    return [problem_from_row(row, str(path), line_no) for line_no, row in iter_objects(path)]
