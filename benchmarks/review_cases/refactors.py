"""Behaviour-preserving rewrites of a reference function: the refactorings of the benchmark.

A rename, an append loop made a comprehension (and back), a condition extracted into a helper, two
independent assignments swapped, an ``if``/``else`` inverted, a temporary inlined, an augmented assignment,
a final ``if``/``return`` made a conditional expression. Each comes with the description a PR would give.
A rewrite is kept only when the sandbox shows every hidden test passing and agreement with the reference
on random inputs (see :mod:`review_cases.build`): these transforms only propose.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator
from itertools import pairwise

from review_cases.edits import (
    Edit,
    body_after_docstring,
    changes_code,
    entry_function,
    indent_of,
    parenthesized,
    replace_node,
    replace_span,
    segment,
)
from review_cases.records import Variant

NO_CHANGE = " No behaviour change."

RENAMES = {
    "i": "index", "j": "inner", "k": "step", "n": "count", "s": "text", "x": "value", "y": "other",
    "l": "items", "lst": "items", "res": "result", "ans": "answer", "cnt": "counter", "tmp": "temp",
    "c": "char", "ch": "char", "d": "table", "m": "middle", "t": "total", "a": "first", "b": "second",
    "arr": "values", "num": "number", "nums": "numbers", "ret": "result", "val": "value", "word": "token",
    "words": "tokens", "total": "running_total", "result": "output", "count": "tally", "idx": "position",
}  # fmt: skip
"""A local's new name (a readability rename); others get a ``_value`` suffix."""

PURE_CALLS = {"len", "abs", "min", "max", "sum", "sorted", "list", "str", "int", "float", "set", "dict",
              "tuple", "range", "bool", "round"}  # fmt: skip
SIMPLE = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.List, ast.Tuple,
          ast.Dict, ast.Set, ast.Subscript, ast.Slice, ast.Load, ast.operator, ast.unaryop, ast.cmpop,
          ast.boolop, ast.expr_context)  # fmt: skip


def _blocks(fn: ast.FunctionDef) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield body_after_docstring(fn) if node is fn and field == "body" else block


def _names(node: ast.AST, ctx: type = ast.Load) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _used(code: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", code) is not None


def renames(code: str, fn: ast.FunctionDef, lines: list[str]) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    declared = {n for s in ast.walk(fn) if isinstance(s, ast.Global | ast.Nonlocal) for n in s.names}
    stored = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    for old in dict.fromkeys(stored):
        if old in params or old in declared or old == "_":
            continue
        new = RENAMES.get(old, f"{old}_value")
        if _used(code, new):
            continue
        by_line: dict[int, list[ast.Name]] = {}
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == old:
                by_line.setdefault(n.lineno, []).append(n)
        edits = []
        for lineno, nodes in sorted(by_line.items()):
            raw = lines[lineno - 1].encode()
            for n in sorted(nodes, key=lambda n: n.col_offset, reverse=True):
                raw = raw[: n.col_offset] + new.encode() + raw[n.end_col_offset :]
            edits.append(Edit(start=lineno, end=lineno, lines=(raw.decode(),)))
        text = f"Rename `{old}` to `{new}` in `{fn.name}` for readability.{NO_CHANGE}"
        yield "rename a local", tuple(edits), text


def _append_of(stmt: ast.stmt, target: str) -> ast.expr | None:
    """``E`` when ``stmt`` is ``target.append(E)``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if (isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name)
                and func.value.id == target and len(call.args) == 1 and not call.keywords):  # fmt: skip
            return call.args[0]
    return None


def loops_to_comprehensions(
    fn: ast.FunctionDef, lines: list[str]
) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    for block in _blocks(fn):
        for first, loop in pairwise(block):
            if not (isinstance(first, ast.Assign) and len(first.targets) == 1
                    and isinstance(first.targets[0], ast.Name) and isinstance(first.value, ast.List)
                    and not first.value.elts and isinstance(loop, ast.For) and not loop.orelse
                    and len(loop.body) == 1):  # fmt: skip
                continue
            name = first.targets[0].id
            inner, cond = loop.body[0], None
            if isinstance(inner, ast.If) and not inner.orelse and len(inner.body) == 1:
                cond, inner = inner.test, inner.body[0]
            elem = _append_of(inner, name)
            texts = [segment(lines, n) for n in (loop.target, loop.iter, elem, cond) if n is not None]
            if elem is None or None in texts or any(name in _names(n) for n in (loop.iter, elem, cond) if n):
                continue
            target, it, value = texts[0], texts[1], texts[2]
            tail = f" if {texts[3]}" if cond is not None else ""
            new = f"{indent_of(lines[first.lineno - 1])}{name} = [{value} for {target} in {it}{tail}]"
            text = f"Build `{name}` in `{fn.name}` with a list comprehension instead of an append loop.{NO_CHANGE}"
            yield (
                "loop to comprehension",
                (Edit(start=first.lineno, end=loop.end_lineno, lines=(new,)),),
                text,
            )


def comprehensions_to_loops(
    code: str, fn: ast.FunctionDef, lines: list[str]
) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    for block in _blocks(fn):
        for stmt in block:
            comp = stmt.value if isinstance(stmt, ast.Assign | ast.Return) else None
            if (
                not isinstance(comp, ast.ListComp)
                or len(comp.generators) != 1
                or stmt.lineno != stmt.end_lineno
            ):
                continue
            gen = comp.generators[0]
            if gen.is_async or len(gen.ifs) > 1:
                continue
            if isinstance(stmt, ast.Assign):
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    continue
                name = stmt.targets[0].id
            else:
                name = next((n for n in ("result", "out_list", "collected") if not _used(code, n)), None)
                if name is None:
                    continue
            texts = [segment(lines, n) for n in (gen.target, gen.iter, comp.elt, *gen.ifs)]
            if None in texts:
                continue
            pad = indent_of(lines[stmt.lineno - 1])
            body = [f"{pad}{name} = []", f"{pad}for {texts[0]} in {texts[1]}:"]
            inner = pad + "    "
            if gen.ifs:
                body.append(f"{inner}if {texts[3]}:")
                inner += "    "
            body.append(f"{inner}{name}.append({texts[2]})")
            if isinstance(stmt, ast.Return):
                body.append(f"{pad}return {name}")
            text = f"Replace the list comprehension in `{fn.name}` with an explicit loop, easier to step through.{NO_CHANGE}"
            yield (
                "comprehension to loop",
                (Edit(start=stmt.lineno, end=stmt.end_lineno, lines=tuple(body)),),
                text,
            )


def extract_helpers(
    code: str, tree: ast.Module, fn: ast.FunctionDef, lines: list[str]
) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    module_names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    module_names |= {a.asname or a.name.split(".")[0] for n in tree.body
                     if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}  # fmt: skip
    helper = f"_{fn.name}_condition"
    if _used(code, helper):
        return
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    for node in ast.walk(fn):
        test = node.test if isinstance(node, ast.If | ast.While | ast.IfExp) else None
        if not isinstance(test, ast.Compare | ast.BoolOp):
            continue
        banned = ast.Lambda | ast.comprehension | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom
        text = segment(lines, test)
        if text is None or any(isinstance(n, banned) for n in ast.walk(test)):
            continue
        found = sorted((n for n in ast.walk(test) if isinstance(n, ast.Name)), key=lambda n: n.col_offset)
        params = [n for n in dict.fromkeys(n.id for n in found)
                  if n not in module_names and not hasattr(builtins, n)]  # fmt: skip
        if not params:
            continue
        names = ", ".join(params)
        define = Edit(
            start=start, end=start - 1, lines=(f"def {helper}({names}):", f"    return {text}", "", "")
        )
        use = replace_node(lines, test, f"{helper}({names})")
        if use is None:
            continue
        desc = f"Extract a condition of `{fn.name}` into the helper `{helper}`.{NO_CHANGE}"
        yield "extract helper", (define, use), desc
        return


def _simple(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id in PURE_CALLS):
                return False
        elif not isinstance(n, (*SIMPLE, ast.keyword)):
            return False
    return True


def reorders(fn: ast.FunctionDef, lines: list[str]) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    for block in _blocks(fn):
        for a, b in pairwise(block):
            ok = all(isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                     and s.lineno == s.end_lineno and _simple(s.value) for s in (a, b))  # fmt: skip
            if not ok or b.lineno != a.lineno + 1:
                continue
            ta, tb = a.targets[0].id, b.targets[0].id  # type: ignore[attr-defined]
            if ta == tb or ta in _names(b.value) or tb in _names(a.value):  # type: ignore[attr-defined]
                continue
            edit = Edit(start=a.lineno, end=b.lineno, lines=(lines[b.lineno - 1], lines[a.lineno - 1]))
            text = f"Reorder the setup of `{ta}` and `{tb}` in `{fn.name}` so related lines sit together.{NO_CHANGE}"
            yield "reorder independent statements", (edit,), text


def inversions(fn: ast.FunctionDef, lines: list[str]) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    for node in ast.walk(fn):
        if not isinstance(node, ast.If) or not node.orelse:
            continue
        else_line = node.orelse[0].lineno - 1
        header = lines[node.lineno - 1]
        test = segment(lines, node.test)
        if lines[else_line - 1].strip() != "else:" or test is None or not header.lstrip().startswith("if "):
            continue
        if node.test.end_lineno != node.lineno or not header.rstrip().endswith(":"):
            continue
        pad = indent_of(header)
        body = lines[node.lineno : else_line - 1]
        other = lines[else_line : node.end_lineno]
        new = (f"{pad}if not ({test}):", *other, f"{pad}else:", *body)
        text = f"Invert the `if` in `{fn.name}` so the `else` branch comes first.{NO_CHANGE}"
        yield "invert if/else", (Edit(start=node.lineno, end=node.end_lineno, lines=new),), text


def inlines(fn: ast.FunctionDef, lines: list[str]) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    for block in _blocks(fn):
        for a, b in pairwise(block):
            if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
                    and isinstance(b, ast.Return) and isinstance(b.value, ast.Name)
                    and b.value.id == a.targets[0].id):  # fmt: skip
                continue
            name = b.value.id
            uses = sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name)
            value = segment(lines, a.value)
            if uses != 2 or value is None:
                continue
            new = f"{indent_of(lines[a.lineno - 1])}return {value}"
            text = f"Return the value directly in `{fn.name}` instead of through the temporary `{name}`.{NO_CHANGE}"
            yield "inline a temporary", (Edit(start=a.lineno, end=b.end_lineno, lines=(new,)),), text


def augmented(fn: ast.FunctionDef, lines: list[str]) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.BinOp) and type(node.value.op) in ops
                and isinstance(node.value.left, ast.Name) and node.value.left.id == node.targets[0].id):  # fmt: skip
            continue
        right = segment(lines, node.value.right)
        if right is None or node.lineno != node.end_lineno:
            continue
        name = node.targets[0].id
        edit = replace_span(lines, node.lineno, node.col_offset, node.end_col_offset,
                            f"{name} {ops[type(node.value.op)]}= {right}")  # fmt: skip
        yield (
            "augmented assignment",
            (edit,),
            f"Use augmented assignment for `{name}` in `{fn.name}`.{NO_CHANGE}",
        )


def conditional_returns(fn: ast.FunctionDef, lines: list[str]) -> Iterator[tuple[str, tuple[Edit, ...], str]]:
    for block in _blocks(fn):
        for a, b in zip(block, [*block[1:], None], strict=False):
            if not (isinstance(a, ast.If) and len(a.body) == 1 and isinstance(a.body[0], ast.Return)):
                continue
            other = a.orelse[0] if len(a.orelse) == 1 else (b if not a.orelse else None)
            if not isinstance(other, ast.Return) or other.value is None or a.body[0].value is None:
                continue
            if a.orelse and lines[a.orelse[0].lineno - 2].strip() != "else:":
                continue
            texts = [segment(lines, n) for n in (a.body[0].value, a.test, other.value)]
            if None in texts or any(
                isinstance(n, ast.IfExp | ast.Lambda) for n in (a.body[0].value, other.value)
            ):
                continue
            cond = parenthesized(texts[1], a.test) if isinstance(a.test, ast.IfExp | ast.Lambda) else texts[1]
            new = f"{indent_of(lines[a.lineno - 1])}return {texts[0]} if {cond} else {texts[2]}"
            edit = Edit(start=a.lineno, end=other.end_lineno, lines=(new,))
            text = (
                f"Collapse the final `if`/`return` in `{fn.name}` into a conditional expression.{NO_CHANGE}"
            )
            yield "conditional expression", (edit,), text


def refactorings(code: str, entry: str) -> list[Variant]:
    """Every proposed refactoring of ``entry`` that compiles and changes the text, grouped by transform."""
    tree = ast.parse(code)
    fn = entry_function(tree, entry)
    if fn is None:
        return []
    lines = code.split("\n")
    found = [
        *renames(code, fn, lines),
        *loops_to_comprehensions(fn, lines),
        *comprehensions_to_loops(code, fn, lines),
        *extract_helpers(code, tree, fn, lines),
        *reorders(fn, lines),
        *inversions(fn, lines),
        *inlines(fn, lines),
        *augmented(fn, lines),
        *conditional_returns(fn, lines),
    ]
    return [
        Variant(family="refactor", name=name, edits=edits, description=text)
        for name, edits, text in found
        if changes_code(code, edits)
    ]
