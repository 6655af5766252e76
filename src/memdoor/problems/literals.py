"""Literal values in a request or a model's answer, in Python's or JSON's spelling, and functional test
inputs made of them (one JSON value per line).

Values may be written as Python or JSON literals (``true``, ``null``); results must be JSON-able, since
functional tests compare ``json.loads(expected)``.
"""

from __future__ import annotations

import ast
import json
from typing import Any

UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
"""What parsing untrusted text may raise (too deep an expression, a NUL byte, ...)."""
_JSON_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class NotLiteral(ValueError):
    """An expression that is not a literal value (a name, a call, ``**`` in a dict, ...)."""


def literal_value(node: ast.AST) -> Any:
    """A literal value from an expression node; JSON's true/false/null accepted as names."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [literal_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise NotLiteral("dict unpacking")
        return {literal_value(k): literal_value(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = literal_value(node.operand)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    raise NotLiteral(type(node).__name__)


def parse_value(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one literal (a trailing period is allowed), else ``(False, None)``."""
    text = text.strip().rstrip(".").strip().strip("`").strip()
    if not text:
        return False, None
    try:
        return True, literal_value(ast.parse(text, mode="eval").body)
    except (SyntaxError, NotLiteral, RecursionError, MemoryError, ValueError):
        return False, None


def to_json(value: Any) -> str | None:
    """``value`` as JSON, or None when it is not JSON-able (a set, NaN, ...)."""
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def json_input(args: list[Any]) -> str | None:
    """Arguments as a functional test's input, one JSON value per line; None when one is not JSON."""
    lines = [to_json(a) for a in args]
    return None if any(line is None for line in lines) else "\n".join(lines)  # type: ignore[arg-type]
