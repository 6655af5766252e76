"""A function answer without the demo lines a model adds around it.

Models often end a function with example calls: ``print(encode("ababab"))   # Output: "a3b2ab"``,
``assert f(2) == 4``, a loop over test cases, an ``if __name__ == "__main__":`` block. They are not
part of the function the user asked for, the outputs in their comments are often wrong, and a wrong
top-level ``assert`` even makes the import fail. :func:`drop_demo_lines` removes them, at the point
where a candidate's code is taken from the model's text (before anything runs it), so the program
graded is the program the user gets.

What goes, at the top level only (definitions are never touched):

- ``if __name__ == "__main__":`` blocks (they never run when the function is imported, nor under the
  graders, which load the code under another module name);
- ``print(...)`` calls, bare calls of the requested function (or of a class the answer defines), and
  ``assert`` statements about them — when every call in them is *harmless* (below);
- loops whose body is only such lines, and assignments of demo data (``result = f(3)``,
  ``tests = [...]`` read only by dropped lines) — when no remaining line reads what they assign.

A call is harmless when it calls the requested function, a class the answer defines, a function the
answer defines that reads no module-level state and declares no ``global`` (so calling it cannot
change what the definitions see), a method of demo data, or a pure builtin (``len``, ``sorted``,
``str``, ... and ``print``/``input``). Anything else — ``sys.setrecursionlimit(...)``, a call of a
helper that fills a module-level table, an assignment a function reads — stays. The code is kept
unchanged when it does not parse, reads its globals dynamically (``globals()``, ``eval``, ...), puts
a dropped and a kept statement on one line, or is nothing but demo lines. Comment lines attached to
dropped lines (``# Example usage:``, ``# Output: 3``) go with them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

# fmt: off
_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "chr", "dict", "divmod", "enumerate", "filter",
    "float", "format", "frozenset", "hex", "int", "isinstance", "len", "list", "map", "max", "min",
    "oct", "ord", "pow", "range", "repr", "reversed", "round", "set", "sorted", "str", "sum", "tuple",
    "type", "zip", "print", "input",
})
# fmt: on
_DYNAMIC = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__", "getattr", "setattr"})
_COMMENT = re.compile(r"^\s*#")


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _stores(nodes: Iterable[ast.AST]) -> set[str]:
    """Names ``nodes`` bind in their own scope (nested functions and classes bind only their name;
    comprehension variables are their own)."""
    out: set[str] = set()
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(n.name)
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            out.add(n.id)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _reads(node: ast.AST) -> set[str]:
    """The names ``node`` reads from the scope it is in: inside functions only their free names (a
    function's own locals are not the module's), plus names declared ``global`` or augmented."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        a = node.args
        params = [
            *a.posonlyargs,
            *a.args,
            *a.kwonlyargs,
            *([a.vararg] if a.vararg else []),
            *([a.kwarg] if a.kwarg else []),
        ]
        outer: set[str] = set()
        for d in [*getattr(node, "decorator_list", []), *a.defaults, *(d for d in a.kw_defaults if d)]:
            outer |= _reads(d)
        for p in params:
            if p.annotation is not None:
                outer |= _reads(p.annotation)
        if getattr(node, "returns", None) is not None:
            outer |= _reads(node.returns)  # type: ignore[union-attr, arg-type]
        body = node.body if isinstance(node.body, list) else [node.body]
        declared = {
            x for s in body for n in ast.walk(s) if isinstance(n, ast.Global | ast.Nonlocal) for x in n.names
        }
        local = ({p.arg for p in params} | _stores(body)) - declared
        inner: set[str] = set()
        for s in body:
            inner |= _reads(s)
        return outer | (inner - local) | declared
    if isinstance(node, _COMPREHENSIONS):
        gens = node.generators
        targets = _stores([g.target for g in gens])
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        parts += [x for g in gens for x in g.ifs] + [g.iter for g in gens[1:]]
        inner = set().union(*(_reads(x) for x in parts))
        return _reads(gens[0].iter) | (inner - targets)
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    out: set[str] = set()
    if isinstance(node, ast.Global | ast.Nonlocal):
        out.update(node.names)
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        out.add(node.target.id)
    for child in ast.iter_child_nodes(node):
        out |= _reads(child)
    return out


def _binds(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds in the module."""
    return _stores([node])


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    t = stmt.test
    if len(t.ops) != 1 or not isinstance(t.ops[0], ast.Eq):
        return False
    sides = [t.left, t.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


class _Module:
    """What the module defines, and which of its calls are harmless."""

    def __init__(self, tree: ast.Module, func_name: str):
        body = tree.body
        self.target = func_name
        self.classes = {s.name for s in body if isinstance(s, ast.ClassDef)}
        funcs = {s.name: s for s in body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
        bound: set[str] = set()
        for s in body:
            bound |= _binds(s)
        self.bound = bound
        self.defined: set[str] = set()
        for s in body:
            if isinstance(
                s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom
            ):
                self.defined |= _binds(s)
        self.builtins = _PURE_BUILTINS - bound
        self.demo_names: set[str] = set()
        # Functions that read no module-level name but other such functions and builtins: calling one
        # cannot change what the definitions see.
        pure: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, fn in funcs.items():
                if name in pure or any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(fn)):
                    continue
                outside = (_reads(fn) & bound) - pure - self.classes - {name}
                if not outside:
                    pure.add(name)
                    changed = True
        self.pure_funcs = pure

    def _demo_call(self, call: ast.Call) -> bool:
        """A call of the requested function, a defined class or a pure defined function, or a method of
        demo data or of a fresh instance of a defined class."""
        f = call.func
        if isinstance(f, ast.Name):
            return f.id == self.target or f.id in self.classes or f.id in self.pure_funcs
        if isinstance(f, ast.Attribute):
            root = f.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name):
                return root.id in self.demo_names
            if isinstance(root, ast.Call):
                return isinstance(root.func, ast.Name) and root.func.id in self.classes
        return False

    def harmless(self, expr: ast.AST) -> tuple[bool, bool]:
        """(every call in ``expr`` is harmless, some call is a demo call or it reads demo data)."""
        demo = False
        for n in ast.walk(expr):
            if isinstance(n, ast.NamedExpr | ast.Yield | ast.YieldFrom | ast.Await):
                return False, False
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in self.demo_names:
                demo = True
            if isinstance(n, ast.Call):
                if self._demo_call(n):
                    demo = True
                    continue
                f = n.func
                if isinstance(f, ast.Name) and f.id in self.builtins:
                    continue
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Constant | ast.JoinedStr):
                    continue  # ", ".join(...), "{}".format(...)
                return False, False
        return True, demo

    def demo(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt`` is a demo line (before checking who reads what it binds)."""
        if _binds(stmt) & self.defined:
            return False  # it rebinds a definition or an import
        if isinstance(stmt, ast.Expr):
            ok, demo = self.harmless(stmt.value)
            is_print = (
                isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id == "print"
                and "print" in self.builtins
            )
            return ok and (demo or is_print)
        if isinstance(stmt, ast.Assert):
            ok, demo = self.harmless(stmt)
            return ok and demo
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if stmt.value is None or not all(_simple_target(t) for t in targets):
                return False
            ok, _ = self.harmless(stmt.value)
            return ok
        if isinstance(stmt, ast.For):
            if stmt.orelse or not _simple_target(stmt.target) or not self.harmless(stmt.iter)[0]:
                return False
            return all(self.demo(s) for s in stmt.body)
        if isinstance(stmt, ast.If) and not _is_main_guard(stmt):
            return self.harmless(stmt.test)[0] and all(self.demo(s) for s in (*stmt.body, *stmt.orelse))
        return False


def _simple_target(t: ast.expr) -> bool:
    if isinstance(t, ast.Name):
        return True
    return isinstance(t, ast.Tuple | ast.List) and all(_simple_target(e) for e in t.elts)


def _dropped(tree: ast.Module, func_name: str) -> set[int] | None:
    """Indices of the top-level statements to drop; None when the module must be kept as it is."""
    body = tree.body
    mod = _Module(tree, func_name)
    # Demo data: names only candidate assignments bind (a name also bound elsewhere is not demo data).
    assigns = [i for i, s in enumerate(body) if isinstance(s, ast.Assign | ast.AnnAssign | ast.For)]
    other_bound: set[str] = set()
    for i, s in enumerate(body):
        if i not in assigns:
            other_bound |= _binds(s)
    mod.demo_names = {n for i in assigns for n in _binds(body[i])} - other_bound
    guards = {i for i, s in enumerate(body) if _is_main_guard(s) and not s.orelse}
    cands = guards | {i for i, s in enumerate(body) if i not in guards and mod.demo(s)}
    while True:
        kept = [s for i, s in enumerate(body) if i not in cands]
        kept_reads: set[str] = set()
        kept_binds: set[str] = set()
        for s in kept:
            kept_reads |= _reads(s)
            kept_binds |= _binds(s)
        if kept_reads & _DYNAMIC:
            return None
        dropped_reads: set[str] = set()
        for i in cands - guards:
            dropped_reads |= _reads(body[i])
        keep = set()
        for i in cands - guards:
            s = body[i]
            binds = _binds(s)
            if binds & kept_reads:
                keep.add(i)  # a remaining line reads what it assigns
            elif isinstance(s, ast.Assign | ast.AnnAssign) and not (
                mod.harmless(s.value)[1] or binds & dropped_reads  # type: ignore[arg-type]
            ):
                keep.add(i)  # a constant nothing dropped uses: not a demo line
            elif _reads(s) & mod.demo_names & kept_binds:
                keep.add(i)  # it may change data a remaining line keeps
        if not keep:
            return cands
        cands -= keep


def _lines_of(stmts: Iterable[ast.stmt]) -> set[int]:
    out: set[int] = set()
    for s in stmts:
        out.update(range(s.lineno, (s.end_lineno or s.lineno) + 1))
    return out


def drop_demo_lines(code: str, func_name: str) -> str:
    """``code`` without its top-level demo lines (see the module's docstring); unchanged when none."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    try:
        dropped = _dropped(tree, func_name)
    except RecursionError:  # an expression nested too deeply to analyse (1+1+...+1): keep the code as it is
        return code
    if not dropped or len(dropped) == len(tree.body):
        return code  # nothing to drop, or nothing but demo lines: kept for the author to see
    gone = _lines_of(s for i, s in enumerate(tree.body) if i in dropped)
    if gone & _lines_of(s for i, s in enumerate(tree.body) if i not in dropped):
        return code  # statements sharing a line
    lines = code.split("\n")
    code_line = [False] * (len(lines) + 2)  # 1-based: a line of some statement
    for s in tree.body:
        for n in range(s.lineno, (s.end_lineno or s.lineno) + 1):
            code_line[n] = True
    drop = set(gone)
    _attached_comments(lines, code_line, gone, drop)
    out = [line for n, line in enumerate(lines, start=1) if n not in drop]
    text = re.sub(r"\n{3,}", "\n\n\n", "\n".join(out)).rstrip() + ("\n" if code.endswith("\n") else "")
    try:
        ast.parse(text)
    except SyntaxError:
        return code
    return text


def _attached_comments(lines: list[str], code_line: list[bool], gone: set[int], drop: set[int]) -> None:
    """Add to ``drop`` the comment lines outside statements that belong to dropped lines: directly above
    one (no blank line between), directly below one (unless directly above a remaining line), and any
    after the first dropped line that follows the last remaining statement."""
    n = len(lines)

    def comment(i: int) -> bool:
        return not code_line[i] and bool(_COMMENT.match(lines[i - 1]))

    for i in sorted(gone):
        j = i - 1
        while j >= 1 and comment(j):
            drop.add(j)
            j -= 1
        j = i + 1
        below = []
        while j <= n and comment(j):
            below.append(j)
            j += 1
        if not (j <= n and code_line[j] and j not in gone):  # else they head the next remaining line
            drop.update(below)
    last_kept = max((i for i in range(1, n + 1) if code_line[i] and i not in gone), default=0)
    if gone and max(gone) > last_kept:
        for i in range(last_kept + 1, n + 1):
            if comment(i) and i > min(g for g in gone if g > last_kept):
                drop.add(i)
