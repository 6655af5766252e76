"""One-site mutants of a reference function: the bugs of the benchmark.

Each operator changes one place of the entry function's body, textually (the rest of the file keeps its
formatting, so the diff is the mutated line): a comparison flipped at its boundary, a constant or a bound
off by one, ``and``/``or`` swapped, ``min``/``max`` swapped, a branch dropped, a negation or an ``abs``
dropped, a returned boolean flipped. Whether a mutant is a bug (fails a hidden test) and whether the
public tests see it is decided later, in the sandbox.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator

from review_cases.edits import (
    Edit,
    apply_edits,
    compiles,
    entry_function,
    gap,
    indent_of,
    own_nodes,
    parenthesized,
    replace_node,
    replace_span,
    segment,
)
from review_cases.records import Variant

COMPARE = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
}
"""Comparison operator: (its text, the boundary mutant's text)."""

CLAIMS = {
    "refactor": [
        "Refactor `{f}`; no behaviour change.",
        "Simplify the condition in `{f}` (no functional change).",
        "Clean up `{f}` for readability; behaviour is unchanged.",
        "Restructure `{f}` slightly. Pure refactoring, no behaviour change intended.",
    ],
    "vague": [
        "Tidy up `{f}`.",
        "Small cleanup in `{f}`.",
        "Simplify the logic of `{f}` a little.",
        "Minor readability pass over `{f}`.",
    ],
    "fix": [
        "Fix an edge case in `{f}`.",
        "Handle the boundary case in `{f}` correctly.",
        "Make `{f}` more robust on unusual inputs.",
    ],
}
"""Descriptions a real PR carrying the bug might have: most claim a refactoring or say little; a few claim
a fix (the difference then reads as intended)."""


def bug_description(entry: str, rng: random.Random, *, loop: bool) -> tuple[str, str]:
    """(claim, description) for a bug case (``loop``: the function has a loop to tidy up)."""
    claim = rng.choices(["refactor", "vague", "fix"], weights=[4, 4, 2])[0]
    choices = CLAIMS[claim] + (["Tidy up the loop in `{f}`."] if loop and claim == "vague" else [])
    return claim, rng.choice(choices).format(f=entry)


def _op_flips(lines: list[str], node: ast.AST) -> Iterator[tuple[str, Edit]]:
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            if type(op) not in COMPARE:
                continue
            found = gap(lines, operands[i], operands[i + 1])
            if found is None:
                continue
            line, start, end, text = found
            old, new = COMPARE[type(op)]
            if text.strip(" ()\t") != old:
                continue
            yield (
                f"comparison {old} to {new}",
                replace_span(lines, line, start, end, text.replace(old, new, 1)),
            )
    elif isinstance(node, ast.BoolOp) and len(node.values) >= 2:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        found = gap(lines, node.values[0], node.values[1])
        if found is not None and found[3].strip(" ()\t") == old:
            line, start, end, text = found
            yield f"{old} to {new}", replace_span(lines, line, start, end, text.replace(old, new, 1))
    elif isinstance(node, ast.BinOp):
        yield from _binop(lines, node)


def _binop(lines: list[str], node: ast.BinOp) -> Iterator[tuple[str, Edit]]:
    right = node.right
    if isinstance(node.op, ast.Add | ast.Sub) and isinstance(right, ast.Constant) and right.value == 1:
        left = segment(lines, node.left)
        if left is not None and type(right.value) is int:
            sign = "+" if isinstance(node.op, ast.Add) else "-"
            edit = replace_node(lines, node, parenthesized(left, node.left))
            if edit is not None:
                yield f"dropped {sign} 1", edit
    found = gap(lines, node.left, node.right)
    if found is None:
        return
    line, start, end, text = found
    pairs = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.FloorDiv: ("//", "/")}
    if type(node.op) in pairs:
        old, new = pairs[type(node.op)]
        if text.strip(" ()\t") == old:
            yield f"{old} to {new}", replace_span(lines, line, start, end, text.replace(old, new, 1))


def _calls(lines: list[str], node: ast.AST) -> Iterator[tuple[str, Edit]]:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return
    name = node.func.id
    if name in ("min", "max"):
        other = "max" if name == "min" else "min"
        edit = replace_node(lines, node.func, other)
        if edit is not None:
            yield f"{name} to {other}", edit
    elif name == "abs" and len(node.args) == 1 and not node.keywords:
        inner = segment(lines, node.args[0])
        edit = replace_node(lines, node, parenthesized(inner, node.args[0])) if inner else None
        if edit is not None:
            yield "dropped abs", edit
    elif name == "len" and len(node.args) == 1:
        text = segment(lines, node)
        edit = replace_node(lines, node, f"({text} - 1)") if text else None
        if edit is not None:
            yield "len off by one", edit
    elif name == "range" and node.args and not node.keywords:
        stop = node.args[0] if len(node.args) == 1 else node.args[1]
        text = segment(lines, stop)
        if text is not None and not isinstance(stop, ast.Constant):
            for sign in ("+", "-"):
                edit = replace_node(lines, stop, f"{text} {sign} 1")
                if edit is not None:
                    yield f"range stop {sign} 1", edit


def _values(lines: list[str], node: ast.AST) -> Iterator[tuple[str, Edit]]:
    if isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) < 10**6:
        for delta in (1, -1):
            edit = replace_node(lines, node, str(node.value + delta))
            if edit is not None:
                yield f"constant {node.value} to {node.value + delta}", edit
    elif isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
        if type(node.value.value) is bool:
            flipped = str(not node.value.value)
            edit = replace_node(lines, node.value, flipped)
            if edit is not None:
                yield f"returned {node.value.value} to {flipped}", edit
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = segment(lines, node.operand)
        edit = replace_node(lines, node, parenthesized(inner, node.operand)) if inner else None
        if edit is not None:
            yield "dropped not", edit
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        lower = node.slice.lower
        text = segment(lines, lower) if lower is not None else None
        if text is not None and lower is not None:
            edit = replace_node(lines, lower, f"{text} + 1")
            if edit is not None:
                yield "slice start + 1", edit


def _branches(lines: list[str], fn: ast.FunctionDef) -> Iterator[tuple[str, Edit]]:
    """Drop an ``if`` without ``else`` (a guard), or an ``else`` block."""
    for parent in ast.walk(fn):
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for stmt in block:
                if not isinstance(stmt, ast.If) or stmt is fn.body[0]:
                    continue
                if not stmt.orelse:
                    keep = () if len(block) > 1 else (indent_of(lines[stmt.lineno - 1]) + "pass",)
                    if lines[stmt.lineno - 1].lstrip().startswith("if "):
                        yield "dropped if branch", Edit(start=stmt.lineno, end=stmt.end_lineno, lines=keep)
                else:
                    first = stmt.orelse[0]
                    else_line = first.lineno - 1
                    if lines[else_line - 1].strip() == "else:":
                        yield "dropped else branch", Edit(start=else_line, end=stmt.orelse[-1].end_lineno)


def mutants(code: str, entry: str) -> list[Variant]:
    """Every one-site mutant of ``entry``'s body that compiles and changes the text, in source order."""
    tree = ast.parse(code)
    fn = entry_function(tree, entry)
    if fn is None:
        return []
    lines = code.split("\n")
    found: list[tuple[str, Edit]] = []
    for node in own_nodes(fn):
        found.extend(_op_flips(lines, node))
        found.extend(_calls(lines, node))
        found.extend(_values(lines, node))
    found.extend(_branches(lines, fn))
    out: list[Variant] = []
    seen: set[str] = set()
    for name, edit in found:
        changed = apply_edits(code, (edit,))
        if changed == code or changed in seen or not compiles(changed):
            continue
        seen.add(changed)
        out.append(Variant(family="mutant", name=name, edits=(edit,)))
    return out


def operator_class(name: str) -> str:
    """The family of an operator name, for balancing the bugs across kinds of mistake."""
    for prefix in ("comparison", "constant", "range", "dropped", "returned", "len", "slice"):
        if name.startswith(prefix):
            return "branch" if name.startswith("dropped") and "branch" in name else prefix
    return "operator"
