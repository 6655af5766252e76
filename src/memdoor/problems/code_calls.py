"""Calls written as code: the literal arguments of every call of a function in a text's code blocks
(test inputs a model wrote as Python, or JavaScript, instead of the asked-for format)."""

from __future__ import annotations

import ast
import re
from typing import Any

from memdoor.problems.literals import UNPARSABLE, NotLiteral, literal_value
from memdoor.problems.request_lines import MAX_INLINE, code_blocks


def _bindings(tree: ast.Module) -> dict[str, Any]:
    """Top-level ``name = literal`` assignments (the last one wins)."""
    out: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                out[stmt.targets[0].id] = literal_value(stmt.value)
            except (NotLiteral, RecursionError):
                out.pop(stmt.targets[0].id, None)
    return out


_JS_DECLARATION = re.compile(r"^\s*(?:const|let|var)\s+")


def _js_line_as_python(line: str) -> str:
    """A line of JavaScript calls in Python's syntax where it has the same meaning: no ``//`` comment (one
    outside a string), no ``const``/``let``/``var``, no closing ``;`` (``console.log(f([1, 2], 'a'));``
    and ``const x = [1];`` then read as Python does)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote and line[i - 1] != "\\":
                quote = None
        elif c in "'\"`":
            quote = c
        elif line.startswith("//", i):
            line = line[:i]
            break
    return _JS_DECLARATION.sub("", line).rstrip().rstrip(";").rstrip()


def _parsed_pieces(code: str, *, javascript: bool = False) -> list[ast.Module]:
    """``code`` parsed whole, or else line by line (the lines that parse); JavaScript lines are read as
    Python first (:func:`_js_line_as_python`)."""
    if javascript:
        code = "\n".join(_js_line_as_python(line) for line in code.splitlines())
    try:
        return [ast.parse(code)]
    except UNPARSABLE:
        pass
    pieces = []
    for line in code.splitlines()[: MAX_INLINE * 10]:
        try:
            pieces.append(ast.parse(line.strip()))
        except UNPARSABLE:
            continue
    return pieces


def calls_in_code(
    text: str, name: str, *, limit: int = MAX_INLINE, language: str = "python"
) -> list[list[Any]]:
    """The literal arguments of every call of ``name`` in the code blocks of ``text`` (the whole text when
    it has none), in order: ``print(f(1, [2]))``, ``assert f("a") == 3``, ``x = [1]`` then ``f(x)``; in
    JavaScript also ``console.log(f([1, 2], 'a')); // 3`` and ``const x = [1];``. Calls with keywords,
    ``*args`` or arguments that are not literals are left out."""
    found: list[list[Any]] = []
    for block in code_blocks(text) or [text]:
        for tree in _parsed_pieces(block, javascript=language == "javascript"):
            bound = _bindings(tree)
            calls = sorted(
                (n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)
            )
            for node in calls:
                if not (isinstance(node.func, ast.Name) and node.func.id == name):
                    continue
                if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                    continue
                try:
                    args = [
                        bound[a.id] if isinstance(a, ast.Name) and a.id in bound else literal_value(a)
                        for a in node.args
                    ]
                except (NotLiteral, RecursionError):
                    continue
                found.append(args)
                if len(found) >= limit:
                    return found
    return found
