"""Examples written doctest-style in a docstring (``>>> f(1)`` then ``2``, or ``f(1) ==> 2`` on one
line), as functional tests: the strict reader every richer one (:mod:`memdoor.problems.prompt_examples`)
starts from."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from memdoor.core.problem import TestCase

_ARROWS = r"(?:==>|==|➞|->|=>|should return|returns|should be)"


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
    # the result: from its first to its last character that is not blank (not a lazy ".+?" before "\s*$",
    # which reads the rest of a run of blanks from each of its characters: a square of the line's length)
    call_re = re.compile(rf"^\s*(?:>>>\s*)?({re.escape(entry_point)}\(.*\))\s*{_ARROWS}\s*+(.*\S)\s*$")
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
