"""Which functions a change altered (Python): compare each top-level function and method of the base and
the changed file by its syntax tree.

A function is changed when its tree differs once positions, comments, layout and its docstring are left
out (a reformatted or re-documented function is not). A function whose tree is the same but that reads a
module-level name whose assignment changed (``LIMIT = 10`` became ``LIMIT = 11``) counts too: its
behaviour may have changed. Functions only on one side (added, removed) are not compared: there is
nothing to run them against. Test files are not the change's behaviour and are left out.
"""

from __future__ import annotations

import ast
import difflib
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, Field

MAX_LITERALS = 12
"""Literals taken from a function's changed lines (for our own inputs)."""
MAX_LITERAL_CHARS = 80

Callable_ = Literal["function", "method", "staticmethod", "classmethod"]


class Param(BaseModel):
    """One parameter of a function's signature (the changed version's)."""

    name: str
    kind: Literal["positional", "var_positional", "keyword_only", "var_keyword"]
    default: str | None = Field(default=None, description="The default's source text, when there is one.")
    annotation: str | None = None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind in ("positional", "keyword_only")


class ChangedFunction(BaseModel):
    """A function the change altered, with what the stage needs to call it on both versions."""

    file: str = Field(description="Its file after the change (repository path).")
    old_file: str = Field(description="Its file before the change.")
    module: str = Field(description="The dotted name the file is imported by.")
    import_root: str = Field(description="The directory (repository path, '' for the top) on sys.path.")
    old_module: str | None = Field(
        default=None, description="The dotted name of its file before the change, when a rename changed it."
    )
    old_import_root: str | None = Field(default=None, description="The import root of ``old_module``.")
    name: str = Field(description="``f`` or ``Class.method``.")
    kind: Callable_ = "function"
    params: list[Param] = Field(default_factory=list, description="Without self or cls.")
    old_source: str
    new_source: str
    line: int = Field(ge=1, description="First line of the function after the change.")
    end_line: int = Field(ge=1)
    changed_lines: list[int] = Field(default_factory=list, description="Its lines the change touched.")
    literals: list[Any] = Field(default_factory=list, description="Literals on the changed lines.")
    why: str = Field(default="its code changed", description="Why it is compared.")

    @property
    def signature(self) -> str:
        def one(p: Param) -> str:
            star = {"var_positional": "*", "var_keyword": "**"}.get(p.kind, "")
            text = star + p.name + (f": {p.annotation}" if p.annotation else "")
            return text + (f" = {p.default}" if p.default is not None else "")

        return f"{self.name}({', '.join(one(p) for p in self.params)})"

    def excerpts(self, limit: int = 4000) -> tuple[str, str]:
        """The old and the new source for a prompt: whole when both fit ``limit`` characters, else the
        ``def`` line and the lines around the changed ones (gaps marked)."""
        if len(self.old_source) + len(self.new_source) <= limit:
            return self.old_source, self.new_source
        old, new = self.old_source.splitlines(), self.new_source.splitlines()
        o_idx, n_idx = changed_spans(old, new)
        return around(old, o_idx, limit // 2), around(new, n_idx, limit // 2)

    @property
    def first_changed(self) -> tuple[int, int]:
        lines = self.changed_lines or [self.line]
        return lines[0], lines[-1]

    @property
    def language(self) -> Literal["python"]:
        return "python"


def is_test_file(path: str) -> bool:
    """Test code (``test_*.py``, ``*_test.py``, ``conftest.py``, files under ``tests``/``test``)."""
    p = PurePosixPath(path)
    return (
        p.name.startswith("test_")
        or p.name.endswith("_test.py")
        or p.name == "conftest.py"
        or any(part in ("tests", "test") for part in p.parts[:-1])
    )


def module_name(path: str, exists: Any) -> tuple[str, str] | None:
    """``(module, import_root)`` for the repository path ``path``: up through the directories holding an
    ``__init__.py`` (``exists(rel)`` says whether a file is in the tree). None when not importable."""
    p = PurePosixPath(path)
    if p.suffix != ".py":
        return None
    parts = list(p.parts[:-1])
    names = [] if p.stem == "__init__" else [p.stem]
    while parts and exists("/".join([*parts, "__init__.py"])):
        names.insert(0, parts.pop())
    if not names or not all(n.isidentifier() for n in names):
        return None
    return ".".join(names), "/".join(parts)


def shape(node: ast.AST) -> str:
    """The node's tree without positions and its docstring: equal for a reformatted function."""
    fresh = ast.parse(ast.unparse(node)).body[0]
    if ast.get_docstring(fresh, clean=False) is not None:  # type: ignore[arg-type]
        fresh.body = fresh.body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(fresh, include_attributes=False)


Def = ast.FunctionDef | ast.AsyncFunctionDef


def definitions(tree: ast.Module) -> dict[str, tuple[Def, Callable_]]:
    """Top-level functions and the methods of top-level classes, by ``f`` / ``Class.method``."""
    out: dict[str, tuple[Def, Callable_]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = (node, "function")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    decorators = {ast.unparse(d) for d in item.decorator_list}
                    kind: Callable_ = (
                        "staticmethod"
                        if "staticmethod" in decorators
                        else ("classmethod" if "classmethod" in decorators else "method")
                    )
                    out[f"{node.name}.{item.name}"] = (item, kind)
    return out


def assignments(tree: ast.Module) -> dict[str, str]:
    """Module-level names and the shape of the statements that assign them."""
    out: dict[str, list[str]] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    out.setdefault(n.id, []).append(ast.dump(node, include_attributes=False))
    return {k: "\n".join(v) for k, v in out.items()}


def params_of(node: Def, kind: Callable_) -> list[Param]:
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    if kind in ("method", "classmethod") and positional:
        positional = positional[1:]  # self / cls
        skipped = 1
    else:
        skipped = 0
    defaults: list[ast.expr | None] = [None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults))
    defaults += list(a.defaults)
    defaults = defaults[skipped:]

    def text(n: ast.AST | None) -> str | None:
        return None if n is None else ast.unparse(n)

    out = [
        Param(name=p.arg, kind="positional", default=text(d), annotation=text(p.annotation))
        for p, d in zip(positional, defaults, strict=True)
    ]
    if a.vararg is not None:
        out.append(Param(name=a.vararg.arg, kind="var_positional", annotation=text(a.vararg.annotation)))
    for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append(Param(name=p.arg, kind="keyword_only", default=text(d), annotation=text(p.annotation)))
    if a.kwarg is not None:
        out.append(Param(name=a.kwarg.arg, kind="var_keyword", annotation=text(a.kwarg.annotation)))
    return out


def _span(node: Def) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _source(lines: list[str], node: Def) -> str:
    first, last = _span(node)
    return "\n".join(lines[first - 1 : last])


MAX_DIFF_LINES = 200
"""Lines between the common first and last ones compared line by line at most: the matcher's time grows
with the cube of their number on repeated lines (0.08 s at 200, a minute at 2,000); more are all
changed."""


def _matched(old: list[str], new: list[str]) -> tuple[list[int], list[int]]:
    olds, news = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        olds += range(i1, i2) or [min(i1, max(len(old) - 1, 0))]
        news += range(j1, j2) or [min(j1, max(len(new) - 1, 0))]
    return olds, news


def changed_spans(old: list[str], new: list[str]) -> tuple[list[int], list[int]]:
    """0-based indexes of the old and of the new lines that differ: the lines both texts start and end with
    are the same, what lies between is matched line by line when at most :data:`MAX_DIFF_LINES` long, else
    all of it is changed (a pull request of many repeated lines cannot stall the review)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    if not mid_old and not mid_new:
        return [], []
    if mid_old and mid_new and max(len(mid_old), len(mid_new)) <= MAX_DIFF_LINES:
        o_idx, n_idx = _matched(mid_old, mid_new)
        return [head + i for i in o_idx], [head + i for i in n_idx]

    def side(lines: list[str], mid: list[str]) -> list[int]:
        return [head + i for i in range(len(mid))] or [min(head, max(len(lines) - 1, 0))]

    return side(old, mid_old), side(new, mid_new)


def around(lines: list[str], changed: list[int], limit: int, context: int = 12) -> str:
    """The first line and the lines within ``context`` of a changed one, gaps marked, cut to ``limit``."""
    keep = {0} | {k for i in changed for k in range(i - context, i + context + 1) if 0 <= k < len(lines)}
    out, last = [], -1
    for k in sorted(keep):
        if k != last + 1:
            out.append("    # … lines left out …")
        out.append(lines[k])
        last = k
    if last < len(lines) - 1:
        out.append("    # … lines left out …")
    text = "\n".join(out)
    return text if len(text) <= limit else text[:limit] + "\n    # … cut …"


def literals_on(node: ast.AST, lines: set[int]) -> list[Any]:
    """Constants (numbers, short strings) of ``node`` on the file lines ``lines``."""
    out: list[Any] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and getattr(n, "lineno", None) in lines:
            v = n.value
            if isinstance(v, bool) or v is None or isinstance(v, bytes):
                continue
            short = isinstance(v, int | float | complex) or (
                isinstance(v, str) and len(v) <= MAX_LITERAL_CHARS
            )
            if short and v not in out:
                out.append(v)
    return out[:MAX_LITERALS]


def _reads(node: Def, names: set[str]) -> list[str]:
    return sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in names})


def assigned_literals(tree: ast.Module, names: list[str]) -> list[Any]:
    """Constants of the module-level statements that assign ``names``."""
    lines = {
        n.lineno
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
        and set(names) & set(assignments(ast.Module(body=[node], type_ignores=[])))
        for n in ast.walk(node)
        if hasattr(n, "lineno")
    }
    return literals_on(tree, lines)  # type: ignore[arg-type]


def compare_files(
    old_text: str, new_text: str, *, file: str, old_file: str, module: str, import_root: str,
    old_module: str | None = None, old_import_root: str | None = None,
) -> list[ChangedFunction]:  # fmt: skip
    """The functions of ``new_text`` whose code changed from ``old_text`` (or that read a changed
    module-level name). ``old_module``, ``old_import_root``: the base's, when a rename changed them.
    SyntaxError when either side does not parse."""
    old_tree, new_tree = ast.parse(old_text), ast.parse(new_text)
    old_defs, new_defs = definitions(old_tree), definitions(new_tree)
    old_names, new_names = assignments(old_tree), assignments(new_tree)
    moved = {n for n in old_names.keys() | new_names.keys() if old_names.get(n) != new_names.get(n)}
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    out = []
    for name, (node, kind) in new_defs.items():
        if name not in old_defs:
            continue
        old_node = old_defs[name][0]
        if shape(old_node) != shape(node):
            why = "its code changed"
        elif reads := _reads(node, moved):
            why = f"it reads {', '.join(reads)}, whose module-level value changed"
        else:
            continue
        reads = _reads(node, moved)
        old_src, new_src = _source(old_lines, old_node), _source(new_lines, node)
        o_idx, n_idx = changed_spans(old_src.splitlines(), new_src.splitlines())
        old_first, new_first = _span(old_node)[0], _span(node)[0]
        old_changed = {old_first + i for i in o_idx}
        new_changed = sorted({new_first + i for i in n_idx})
        literals = literals_on(node, set(new_changed))
        literals += [v for v in literals_on(old_node, old_changed) if v not in literals]
        for tree in (new_tree, old_tree) if reads else ():
            literals += [v for v in assigned_literals(tree, reads) if v not in literals]
        first, last = _span(node)
        out.append(
            ChangedFunction(
                file=file, old_file=old_file, module=module, import_root=import_root, old_module=old_module,
                old_import_root=old_import_root, name=name,
                kind=kind, params=params_of(node, kind), old_source=old_src, new_source=new_src,
                line=first, end_line=last, changed_lines=new_changed, literals=literals[:MAX_LITERALS],
                why=why,
            )
        )  # fmt: skip
    return out
