"""The function a request asks for, as a record (:class:`Target`), and what a code block or a written
signature says of it: its name, its parameters, and the starter code an answer must begin from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from memdoor.problems.literals import UNPARSABLE

DEFAULT_FUNCTION = "solution"
"""The placeholder name of a function a request wants but does not name (the team then chooses the
real name, and the answer says so: :mod:`memdoor.strategies.naming`)."""


@dataclass(frozen=True)
class Target:
    """The function a request asks for (``func_name`` None: a program reading stdin)."""

    func_name: str | None
    starter: str = ""
    """Code the answer must start from (the request's code block), or ""."""
    params: tuple[str, ...] | None = None
    """Parameter names (without ``self``) when the signature is known."""
    found_by: str = "none"
    """code, signature, def, named, examples, default or none."""


def _parse_code(code: str) -> ast.Module | None:
    """``code`` parsed; a block ending with a bare signature (LeetCode starter) gets a ``pass`` body."""
    try:
        return ast.parse(code)
    except UNPARSABLE:
        pass
    lines = [ln for ln in code.rstrip().splitlines() if ln.strip()]
    if not lines:
        return None
    indent = len(lines[-1]) - len(lines[-1].lstrip())
    try:
        return ast.parse(code.rstrip() + "\n" + " " * (indent + 4) + "pass\n")
    except UNPARSABLE:
        return None


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> tuple[str, ...]:
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return tuple(names[1:] if method and names else names)


def _unimplemented(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of only a docstring, ``pass`` or ``...``."""
    for stmt in fn.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        return False
    return True


def target_in_code(code: str) -> tuple[Target, bool, set[str]] | None:
    """The function a code block asks for, whether it is a starter (unfinished), and the names the block
    defines: a ``class Solution`` method; else its last unfinished top-level function (HumanEval prompts
    may define helpers first); else the first unfinished public method of a class; else its last
    function; else the first public method of a class."""
    tree = _parse_code(code)
    if tree is None:
        return None
    starter = code.strip("\n").rstrip() + "\n"
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    methods = {
        c.name: [
            f
            for f in c.body
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and not f.name.startswith("_")
        ]
        for c in classes
    }
    if methods.get("Solution"):
        fn = methods["Solution"][0]
        return Target(fn.name, starter, _params(fn, method=True), "code"), True, defined
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    all_methods = [m for c in classes for m in methods[c.name]]
    choices = [
        *((f, False, True) for f in reversed(funcs) if _unimplemented(f)),
        *((f, True, True) for f in all_methods if _unimplemented(f)),
        *((f, False, False) for f in funcs[-1:]),
        *((f, True, False) for f in all_methods[:1]),
    ]
    if not choices:
        return None
    fn, method, unfinished = choices[0]
    return Target(fn.name, starter, _params(fn, method=method), "code"), unfinished, defined


def signature_params(name: str, params: str) -> tuple[str, ...] | None:
    """The parameter names of ``name(params)`` (a leading ``self``/``cls`` left out), None when they
    do not parse as a parameter list."""
    try:
        tree = ast.parse(f"def {name}({params}): pass")
    except UNPARSABLE:
        return None
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    return _params(fn, method=is_method(params))


def is_method(params: str) -> bool:
    """Whether a parameter list starts with ``self`` or ``cls``."""
    return params.strip().split(",")[0].split(":")[0].strip() in ("self", "cls")


def signature_starter(name: str, params: str, ret: str | None) -> str:
    line = f"def {name}({params.strip()})" + (f" -> {ret.strip()}" if ret else "") + ":"
    try:
        ast.parse(line + "\n    pass\n")
    except UNPARSABLE:
        return ""
    return line + "\n    "
