"""Intended behaviour changes of a reference function, each with the description that asks for exactly it.

Each transform carries ``_property(f, g)`` (source run by the hidden check in the sandbox, ``g`` the
reference): the new behaviour holds for ``f`` — and does not for the reference, which the check asserts
too — and, where the change has a domain (non-empty inputs, non-negative numbers...), a ``domain``
expression over ``args`` on which the change must still agree with the reference: nothing else changed.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from typing import Any

from review_cases.edits import (
    Edit,
    body_after_docstring,
    changes_code,
    entry_function,
    indent_of,
    replace_node,
    segment,
)
from review_cases.records import Source, Variant

EMPTY = {"list": [], "str": ""}

RAISES_ON = """
_BASE = {base!r}
def _property(f, g):
    args = list(_BASE)
    args[{i}] = {value!r}
    return _run(f, args)[:2] == ("raises", "ValueError")
"""

NONE_ON_EMPTY = """
_BASE = {base!r}
def _property(f, g):
    args = list(_BASE)
    args[{i}] = {value!r}
    out = _run(f, args)
    return out[0] == "value" and out[1] is None
"""

NONE_AS_EMPTY = """
_BASE = {base!r}
def _property(f, g):
    none, empty = list(_BASE), list(_BASE)
    none[{i}], empty[{i}] = None, {value!r}
    return _same(_run(f, none), _run(f, empty), args=False)
"""

DEFAULT = """
def _property(f, g):
    full = [a for a in _INPUTS if len(a) == {n}][:12]
    return bool(full) and all(_same(_run(f, a[:-1]), _run(f, a[:-1] + [{value!r}]), args=False) for a in full)
"""

TUPLE = """
def _property(f, g):
    lists = [(w, o) for w, o in _outcomes(f, g) if w[0] == "value" and type(w[1]) is list]
    return bool(lists) and all(o[0] == "value" and type(o[1]) is tuple and list(o[1]) == w[1] for w, o in lists)
"""

DESCENDING = """
def _descending(want, got):
    if want[0] != "value" or type(want[1]) is not list:
        return _same(want, got)
    try:
        return got[0] == "value" and got[1] == sorted(want[1], reverse=True)
    except TypeError:
        return False


def _property(f, g):
    pairs = _outcomes(f, g)
    return all(_descending(w, o) for w, o in pairs) and any(not _same(w, o) for w, o in pairs)
"""

ROUNDED = """
def _rounded(want, got):
    return want[0] == got[0] and not (got[0] == "value" and type(got[1]) is float and round(got[1], {k}) != got[1])


def _property(f, g):
    pairs = _outcomes(f, g)
    return all(_rounded(w, o) for w, o in pairs) and any(not _same(w, o) for w, o in pairs)
"""

STRING_INSENSITIVE = """
def _property(f, g):
    ok, moved = True, False
    for a in _INPUTS:
        if len(a) <= {i} or not isinstance(a[{i}], str):
            continue
        one, two = list(a), list(a)
        one[{i}], two[{i}] = {one}, {two}
        ok = ok and _same(_run(f, one), _run(f, two), args=False)
        moved = moved or not _same(_run(g, one), _run(g, two), args=False)
    return ok and moved
"""


def kinds(src: Source, n: int) -> list[str | None]:
    """Per positional parameter: ``list``, ``str``, ``int``, ``float`` or ``bool`` when every seed of full
    arity agrees, else None."""
    full = [s for s in src.seeds if len(s) == n]
    out: list[str | None] = []
    for i in range(n):
        names = {type(s[i]).__name__ for s in full}
        out.append(names.pop() if len(names) == 1 and full else None)
    return out


def _guard(lines: list[str], fn: ast.FunctionDef, body: list[str]) -> Edit | None:
    stmts = body_after_docstring(fn)
    if not stmts or stmts[0].lineno == fn.lineno:
        return None
    line = stmts[0].lineno
    pad = indent_of(lines[line - 1])
    return Edit(start=line, end=line - 1, lines=tuple(pad + b for b in body))


def _returns(fn: ast.FunctionDef) -> Iterator[ast.Return]:
    """The entry function's own returns (not those of nested functions)."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _param_changes(src: Source, fn: ast.FunctionDef, lines: list[str]) -> Iterator[dict[str, Any]]:
    params = [a.arg for a in fn.args.args]
    if fn.args.vararg or fn.args.kwarg or fn.args.posonlyargs or not params:
        return
    types = kinds(src, len(params))
    base = next((s for s in src.seeds if len(s) == len(params)), None)
    if base is None:
        return
    f = fn.name
    for i, (p, t) in enumerate(zip(params, types, strict=True)):
        if t in EMPTY:
            empty, domain = (
                EMPTY[t],
                f"not (len(args) > {i} and hasattr(args[{i}], '__len__') and len(args[{i}]) == 0)",
            )
            for name, prop, where, guard, text in (
                ("raise ValueError on empty input", RAISES_ON, domain,
                 [f"if not {p}:", f'    raise ValueError("{p} must not be empty")'],
                 f"Make `{f}` raise `ValueError` when `{p}` is empty (an empty `{p}` is a caller error)."),
                ("return None on empty input", NONE_ON_EMPTY, domain, [f"if not {p}:", "    return None"],
                 f"Make `{f}` return `None` when `{p}` is empty."),
                ("accept None as empty", NONE_AS_EMPTY, "True", [f"if {p} is None:", f"    {p} = {empty!r}"],
                 f"Let `{f}` accept `None` for `{p}`, treated as empty."),
            ):  # fmt: skip
                yield dict(
                    name=name, i=i, prop=prop, value=empty, base=base, domain=where, guard=guard, text=text
                )
        if t == "str":
            for name, call, one, two, text in (
                ("ignore surrounding whitespace", "strip", f'"  " + a[{i}] + " "', f"a[{i}]",
                 f"Make `{f}` ignore leading and trailing whitespace in `{p}`."),
                ("case-insensitive input", "lower", f"a[{i}].upper()", f"a[{i}].lower()",
                 f"Make `{f}` case-insensitive in `{p}` (it lower-cases `{p}` first)."),
            ):  # fmt: skip
                domain = f"not (len(args) > {i} and isinstance(args[{i}], str) and args[{i}] != args[{i}].{call}())"
                yield dict(name=name, i=i, prop=STRING_INSENSITIVE, one=one, two=two, domain=domain,
                           guard=[f"{p} = {p}.{call}()"], text=text)  # fmt: skip
        if t == "int" and all(s[i] >= 0 for s in src.seeds if len(s) == len(params)):
            yield dict(name="raise ValueError on negative input", i=i, prop=RAISES_ON, value=-1, base=base,
                       domain=f"not (len(args) > {i} and type(args[{i}]) is int and args[{i}] < 0)",
                       guard=[f"if {p} < 0:", f'    raise ValueError("{p} must be non-negative")'],
                       text=f"Make `{f}` raise `ValueError` when `{p}` is negative.")  # fmt: skip


def _default(src: Source, fn: ast.FunctionDef, lines: list[str]) -> Variant | None:
    args = fn.args.args
    if len(args) < 2 or fn.args.defaults or fn.args.vararg or fn.args.kwarg:
        return None
    last = args[-1]
    values = [s[-1] for s in src.seeds if len(s) == len(args) and type(s[-1]) in (int, float, str, bool)]
    if not values:
        return None
    value = Counter(repr(v) for v in values).most_common(1)[0][0]
    text = segment(lines, last)
    if text is None:
        return None
    new = f"{text} = {value}" if last.annotation is not None else f"{text}={value}"
    edit = replace_node(lines, last, new)
    if edit is None:
        return None
    return Variant(
        family="intent",
        name="new default argument",
        edits=(edit,),
        prop=DEFAULT.format(n=len(args), value=ast.literal_eval(value)),
        domain="True",
        description=f"Give `{last.arg}` of `{fn.name}` the default value `{value}`, so callers may leave it out.",
    )


def _calls(src: Source, fn: ast.FunctionDef, lines: list[str]) -> Iterator[Variant]:
    f = fn.name
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        text = segment(lines, node)
        if text is None:
            continue
        if node.func.id == "sorted" and len(node.args) == 1 and not node.keywords:
            edit = replace_node(lines, node, text[:-1] + ", reverse=True)")
            if edit is not None:
                yield Variant(family="intent", name="sort descending", edits=(edit,),
                              prop=DESCENDING,
                              description=f"Make `{f}` return its result in descending order instead of ascending.")  # fmt: skip
        k = node.args[1].value if node.func.id == "round" and len(node.args) == 2 else None  # type: ignore[attr-defined]
        if type(k) is int and k >= 1:
            digits = segment(lines, node.args[1])
            edit = replace_node(lines, node.args[1], str(k - 1)) if digits else None
            if edit is not None:
                yield Variant(family="intent", name="round differently", edits=(edit,),
                              prop=ROUNDED.format(k=k - 1),
                              description=f"Make `{f}` round to {k - 1} decimal place(s) instead of {k}.")  # fmt: skip


def _tuple(src: Source, fn: ast.FunctionDef, lines: list[str]) -> Variant | None:
    if not all(type(e.expected) is list for e in src.examples):
        return None
    edits = []
    for r in _returns(fn):
        text = segment(lines, r.value) if r.value is not None else None
        if text is None:
            return None
        edits.append(replace_node(lines, r.value, f"tuple({text})"))  # type: ignore[arg-type]
    if not edits or None in edits:
        return None
    return Variant(
        family="intent",
        name="return a tuple",
        edits=tuple(e for e in edits if e is not None),
        prop=TUPLE,
        domain="True",
        plain=True,
        description=f"Make `{fn.name}` return a tuple instead of a list, so callers cannot mutate the result.",
    )


def intents(src: Source) -> list[Variant]:
    """Every proposed intended change of the source's entry function that compiles and changes the text."""
    tree = ast.parse(src.code)
    fn = entry_function(tree, src.entry)
    if fn is None:
        return []
    lines = src.code.split("\n")
    found: list[Variant] = []
    for spec in _param_changes(src, fn, lines):
        edit = _guard(lines, fn, spec["guard"])
        if edit is None:
            continue
        fields = {k: spec[k] for k in ("i", "value", "base", "one", "two") if k in spec}
        found.append(Variant(family="intent", name=spec["name"], edits=(edit,),
                             prop=spec["prop"].format(**fields), domain=spec["domain"],
                             description=spec["text"]))  # fmt: skip
    for extra in (_default(src, fn, lines), *_calls(src, fn, lines), _tuple(src, fn, lines)):
        if extra is not None:
            found.append(extra)
    return [v for v in found if changes_code(src.code, v.edits)]
