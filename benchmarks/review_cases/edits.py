"""Line edits of a source text, the entry function's parts, and the helpers the transforms share.

A change to a case's code is a tuple of :class:`Edit` on the base text's lines, so that two changes on
different lines (an intended change and a bug beside it) compose.
"""

from __future__ import annotations

import ast
import difflib

from pydantic import BaseModel, ConfigDict, Field


class Edit(BaseModel):
    """Lines ``start``..``end`` (1-based, inclusive) of the base replaced by ``lines``; ``end == start - 1``
    inserts ``lines`` before line ``start``."""

    model_config = ConfigDict(frozen=True)

    start: int = Field(ge=1)
    end: int = Field(ge=0)
    lines: tuple[str, ...] = ()

    @property
    def inserts(self) -> bool:
        return self.end < self.start


class EditConflict(ValueError):
    """Two edits touch the same lines."""


def conflicts(a: tuple[Edit, ...], b: tuple[Edit, ...]) -> bool:
    """Whether any edit of ``a`` and any of ``b`` touch the same base lines (or insert at one place)."""
    for x in a:
        for y in b:
            if x.inserts and y.inserts:
                if x.start == y.start:
                    return True
            elif x.inserts or y.inserts:
                ins, rep = (x, y) if x.inserts else (y, x)
                if rep.start < ins.start <= rep.end:
                    return True
            elif x.start <= y.end and y.start <= x.end:
                return True
    return False


def apply_edits(code: str, edits: tuple[Edit, ...]) -> str:
    """``code`` with ``edits`` applied (bottom up, so line numbers stay those of the base)."""
    for i, e in enumerate(edits):
        if conflicts((e,), edits[i + 1 :]):
            raise EditConflict(f"edit at line {e.start} overlaps another")
    lines = code.split("\n")
    for e in sorted(edits, key=lambda e: (e.start, not e.inserts), reverse=True):
        lines[e.start - 1 : e.end] = list(e.lines)
    return "\n".join(lines)


def changed_lines(before: str, after: str) -> list[int]:
    """The after-side line numbers the change touches (a pure deletion: the line after it)."""
    out: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.split("\n"), b=after.split("\n"), autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.update(range(j1 + 1, j2 + 1) if j2 > j1 else [j1 + 1])
    return sorted(out)


def entry_function(tree: ast.Module, entry: str) -> ast.FunctionDef | None:
    """The module-level function ``entry`` (the last definition, as Python keeps it)."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            found = node
    return found


def body_after_docstring(fn: ast.FunctionDef) -> list[ast.stmt]:
    body = fn.body
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return body[1:]
    return body


def own_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    """Every node of ``fn``'s body after its docstring (nested functions included), in source order."""
    nodes: list[ast.AST] = []
    for stmt in body_after_docstring(fn):
        nodes.extend(ast.walk(stmt))
    return sorted(
        (n for n in nodes if hasattr(n, "lineno")),
        key=lambda n: (n.lineno, n.col_offset),  # type: ignore[attr-defined]
    )


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def segment(lines: list[str], node: ast.AST) -> str | None:
    """The source text of ``node`` when it sits on one line, else None."""
    if node.lineno != node.end_lineno:  # type: ignore[attr-defined]
        return None
    raw = lines[node.lineno - 1].encode()  # type: ignore[attr-defined]
    return raw[node.col_offset : node.end_col_offset].decode()  # type: ignore[attr-defined]


def replace_span(lines: list[str], lineno: int, start: int, end: int, text: str) -> Edit:
    """An edit of line ``lineno`` with its bytes ``start``..``end`` (ast's UTF-8 offsets) replaced by ``text``."""
    raw = lines[lineno - 1].encode()
    new = raw[:start].decode() + text + raw[end:].decode()
    return Edit(start=lineno, end=lineno, lines=(new,))


def replace_node(lines: list[str], node: ast.AST, text: str) -> Edit | None:
    """An edit replacing ``node``'s text (one line only) by ``text``."""
    if node.lineno != node.end_lineno:  # type: ignore[attr-defined]
        return None
    return replace_span(lines, node.lineno, node.col_offset, node.end_col_offset, text)  # type: ignore[attr-defined]


def gap(lines: list[str], left: ast.AST, right: ast.AST) -> tuple[int, int, int, str] | None:
    """(line, start, end, text) between ``left``'s end and ``right``'s start when both are on one line."""
    if left.end_lineno != right.lineno:  # type: ignore[attr-defined]
        return None
    raw = lines[right.lineno - 1].encode()  # type: ignore[attr-defined]
    start, end = left.end_col_offset, right.col_offset  # type: ignore[attr-defined]
    return right.lineno, start, end, raw[start:end].decode()  # type: ignore[attr-defined]


def parenthesized(text: str, node: ast.AST) -> str:
    """``text`` (the source of ``node``) in parentheses when it is not an atom."""
    atoms = ast.Name | ast.Constant | ast.Call | ast.Subscript | ast.Attribute | ast.List | ast.Tuple
    return text if isinstance(node, atoms) else f"({text})"


def compiles(code: str) -> bool:
    try:
        compile(code, "solution.py", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def changes_code(code: str, edits: tuple[Edit, ...]) -> bool:
    """Whether ``edits`` change ``code``'s text and leave it compiling (what a proposed change must do)."""
    changed = apply_edits(code, edits)
    return changed != code and compiles(changed)
