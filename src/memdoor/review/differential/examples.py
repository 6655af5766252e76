"""Calls of a changed function found in the base repository: real usage, to run before anything we make up.

Where: the doctest lines (``>>> f(...)``) of the function's old docstring, then of the rest of its base
module, then the calls in the base's test files (those :func:`is_test_file` accepts: ``assert f(2) == 4``,
``self.assertEqual(f([1, 2]), 3)``, any ``f(...)`` in them), the files nearest the function's first.
Everything is read with :mod:`ast` and nothing is run or imported: a call is kept only when its arguments
are literals (``ast.literal_eval`` of each), keyword arguments are put in their place by the signature
(a call that needs a keyword-only argument, ``**`` or ``*`` is left out), and its argument count must fit
the signature. Counts and sizes are capped: calls per function, test files read, bytes read in all.

The base's files: the diff's own files as they were before the change (``base_dir``, built by
:func:`memdoor.review.differential.trees.base_files` from the base commit or by reversing the diff), every
other file as the changed copy has it. A
test file the change adds is not the base's and is not read.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from memdoor.review.diff import FileDiff
from memdoor.review.differential.functions import ChangedFunction, is_test_file
from memdoor.review.differential.inputs import (
    LITERAL_ERRORS,
    MAX_CALL_CHARS,
    MAX_MINED,
    Call,
    literal,
    own_inputs,
)
from memdoor.review.differential.trees import python_paths, touched_paths
from memdoor.review.files import read_text

MAX_TEST_FILES = 200
"""Test files read at most."""
MAX_TEST_BYTES = 4_000_000
"""Bytes of test files read in all."""
MAX_MINED_FILE_BYTES = 400_000
"""A larger test file or base module is not read for calls."""


def short_name(fn: ChangedFunction) -> str:
    """The name a call writes: ``f`` for ``f``, ``method`` for ``Class.method``."""
    return fn.name.rsplit(".", 1)[-1]


def _calls_it(node: ast.Call, fn: ChangedFunction) -> bool:
    """``f(...)`` or ``module.f(...)`` for a function; ``anything.method(...)`` for a method."""
    f, short = node.func, short_name(fn)
    if isinstance(f, ast.Name):
        return fn.kind == "function" and f.id == short
    if isinstance(f, ast.Attribute) and f.attr == short:
        return fn.kind != "function" or isinstance(f.value, ast.Name)
    return False


def arguments(node: ast.Call, fn: ChangedFunction) -> list[Any] | None:
    """The call's positional argument list when every argument is a literal and it fits the signature
    (keywords put in their place, missing optional ones filled with their literal defaults); else None."""
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None
    positional = [p for p in fn.params if p.kind == "positional"]
    if any(p.required for p in fn.params if p.kind == "keyword_only"):
        return None
    varargs = any(p.kind == "var_positional" for p in fn.params)
    try:
        args: list[Any] = [ast.literal_eval(a) for a in node.args]
        placed: dict[int, Any] = {}
        names = [p.name for p in positional]
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in names:
                return None  # **kwargs, a keyword-only argument or a name the signature lacks
            placed[names.index(kw.arg)] = ast.literal_eval(kw.value)
    except LITERAL_ERRORS:
        return None
    if len(args) > len(positional) and not varargs:
        return None
    if placed and (min(placed) < len(args) or (varargs and len(args) > len(positional))):
        return None  # a keyword given twice, or positions that would shift
    for k in range(len(args), max(placed, default=-1) + 1):
        if k in placed:
            args.append(placed[k])
            continue
        ok, value = literal(positional[k].default) if positional[k].default is not None else (False, None)
        if not ok:
            return None
        args.append(value)
    required = sum(p.required for p in positional)
    return args if len(args) >= required else None


MAX_FOUND = 200
"""Calls of one name kept from the test files (before their arguments are read)."""


def _callee(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def calls_of(tree: ast.AST, names: set[str]) -> dict[str, list[ast.Call]]:
    """The calls in ``tree`` of each of ``names`` (``f(...)``, ``x.f(...)``), in source order."""
    out: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _callee(node)) in names:
            out.setdefault(name, []).append(node)  # type: ignore[arg-type]
    return {k: sorted(v, key=lambda n: (n.lineno, n.col_offset))[:MAX_FOUND] for k, v in out.items()}


def literal_calls(nodes: list[ast.Call], fn: ChangedFunction) -> Iterator[list[Any]]:
    """The literal argument lists of those of ``nodes`` that call ``fn``."""
    for node in nodes:
        if _calls_it(node, fn) and (args := arguments(node, fn)) is not None:
            yield args


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except LITERAL_ERRORS:
        return None


def doctest_calls(text: str, fn: ChangedFunction) -> Iterator[list[Any]]:
    """The calls of ``fn`` on the ``>>>`` lines of ``text`` (one-line examples only)."""
    short = short_name(fn)
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith(">>>") or short not in stripped or len(stripped) > MAX_CALL_CHARS * 2:
            continue
        tree = _parse(stripped[3:].strip())
        if tree is not None:
            yield from literal_calls(calls_of(tree, {short}).get(short, []), fn)


def _docstring(source: str) -> str:
    """The docstring of the (first) function in ``source``, '' when none or it does not parse."""
    tree = _parse(textwrap.dedent(source))
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return ""
    return ast.get_docstring(tree.body[0], clean=False) or ""


class BaseTests:
    """The calls of ``names`` in the base's test files, read once for every changed function: the files
    nearest ``near`` (the functions' files) first, bounded in count and bytes (see the module)."""

    def __init__(
        self, changed: Path, base_dir: Path, files: list[FileDiff], near: list[str], names: set[str]
    ) -> None:
        touched = touched_paths(files)
        paths = {p for p in python_paths(changed) if is_test_file(p)}
        paths |= {p for p in touched if p.endswith(".py") and is_test_file(p)}
        dirs = {PurePosixPath(p).parent for p in near}

        def nearness(p: str) -> tuple[int, str]:
            parent = PurePosixPath(p).parent
            close = any(parent == d or d in parent.parents or parent in d.parents for d in dirs)
            return (0 if close else 1, p)

        self.calls: dict[str, list[ast.Call]] = {}
        left = MAX_TEST_BYTES
        for rel in sorted(paths, key=nearness)[:MAX_TEST_FILES]:
            root = base_dir if rel in touched else changed  # an added test file is missing from base_dir
            text = read_text(root, rel, min(MAX_MINED_FILE_BYTES, left))
            if text is None:
                continue
            left -= len(text.encode("utf-8", "surrogatepass"))
            tree = _parse(text) if any(n in text for n in names) else None
            for name, nodes in calls_of(tree, names).items() if tree is not None else ():
                kept = self.calls.setdefault(name, [])
                kept += nodes[: MAX_FOUND - len(kept)]
            if left <= 0:
                break


def mined_calls(fn: ChangedFunction, module_text: str | None, tests: BaseTests | None) -> list[list[Any]]:
    """The calls of ``fn`` in its old docstring, its base module's doctests and the base's tests, in that
    order, distinct, at most :data:`MAX_MINED`."""
    sources: list[Iterator[list[Any]]] = [doctest_calls(_docstring(fn.old_source), fn)]
    if module_text is not None:
        sources.append(doctest_calls(module_text, fn))
    if tests is not None:
        sources.append(literal_calls(tests.calls.get(short_name(fn), []), fn))
    out: list[list[Any]] = []
    seen: set[str] = set()
    for source in sources:
        for args in source:
            text = repr(args)
            if text not in seen and len(text) <= MAX_CALL_CHARS:
                seen.add(text)
                out.append(args)
            if len(out) >= MAX_MINED:
                return out
    return out


def base_inputs(
    fns: list[ChangedFunction], files: list[FileDiff], changed: Path, base_dir: Path
) -> list[list[Call]]:
    """Our own inputs of each function (:func:`own_inputs`), the calls mined from the base first."""
    tests = BaseTests(changed, base_dir, files, [fn.old_file for fn in fns], {short_name(fn) for fn in fns})
    modules: dict[str, str | None] = {}
    out = []
    for fn in fns:
        if fn.old_file not in modules:
            modules[fn.old_file] = read_text(base_dir, fn.old_file, MAX_MINED_FILE_BYTES)
        out.append(own_inputs(fn, mined=mined_calls(fn, modules[fn.old_file], tests)))
    return out
