"""Behaviour keys: what a candidate did on a list of tests, normalised so formatting noise is ignored.

Two candidates whose keys are equal behaved the same on those tests, by the rules the official
LiveCodeBench grader uses to compare an output with the expected one:

- ``stdin``: the grader's own key (``sandbox.compare.stdin_key``): strip the text, split it into
  lines, strip each line; a line whose every whitespace-separated token is a number compares as the
  list of those numbers (``1.0`` = ``1``, exactly), any other line as its text.
- ``functional``: the JSON value (``[1, 2]`` = ``[1,2]``; ``2.0`` = ``2`` since the grader
  compares with ``==``); text that is not JSON compares stripped.
- ``check``: only whether the test passed.

A test that crashed, timed out or ran out of memory is keyed by that status alone (partial output
is noise); so is a test with no recorded output.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from typing import Any

from memdoor.core.problem import TestKind
from memdoor.core.verdict import TestResult
from memdoor.sandbox.compare import stdin_key

FAILED_TO_RUN = frozenset({"runtime_error", "time_limit", "memory_limit", "compile_error", "skipped"})


def _canonical(value: Any) -> Hashable:
    """A hashable form of a JSON value under Python ``==`` (2.0 == 2; True stays apart from 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return ("num", value)
    if isinstance(value, list | tuple):
        return ("list", *(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", *sorted((str(k), _canonical(v)) for k, v in value.items()))
    return ("repr", repr(value))


def normalize_output(output: str, kind: TestKind) -> Hashable:
    """The comparison key of one output of a test of ``kind``."""
    if kind == "stdin":
        return stdin_key(output)
    if kind == "functional":
        try:
            return _canonical(json.loads(output))
        except (json.JSONDecodeError, RecursionError):
            return ("text", output.strip())
    return ("text", output.strip())


def result_key(result: TestResult, kind: TestKind) -> Hashable:
    """The key of one test's result: its status when it did not run to the end, else its output."""
    if result.status in FAILED_TO_RUN or result.output is None or kind == "check":
        return ("!", result.status)
    return normalize_output(result.output, kind)


def behaviour_key(results: Sequence[TestResult], kinds: Sequence[TestKind]) -> tuple[Hashable, ...]:
    """The key of a run: one entry per test (``kinds[i]`` is the kind of test ``i``)."""
    return tuple(result_key(r, k) for r, k in zip(results, kinds, strict=True))


def group_by_key(keys: Sequence[Hashable]) -> list[list[int]]:
    """Indices grouped by equal key; groups ordered by their first index, members ascending."""
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return list(groups.values())
