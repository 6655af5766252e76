"""Which changed files are standard-input programs (Python, JavaScript, Rust), compared by running the base
and the changed program on the same standard input.

- Python: a file that runs code at module level or under ``if __name__ == "__main__"`` and reads standard
  input somewhere (``input()``, ``sys.stdin``, ``open(0)``, ``fileinput``); changed when its syntax tree
  is (positions and comments left out).
- JavaScript (``.js``, ``.mjs``, ``.cjs``): a file that reads ``process.stdin``, ``fs.readFileSync(0)`` or
  ``/dev/stdin``, or uses ``readline``; changed when its tokens are (comments and layout left out).
- Rust: a file with a top-level ``fn main`` that reads ``stdin()``, self-contained (no ``mod name;``: the
  sandbox compiles one file, with the crates it has prebuilt); changed when its tokens are.

Test files are not programs of the change. What is not compared is said (:class:`Skipped`).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import PurePosixPath
from typing import Any

from memdoor.review.context import Skipped
from memdoor.review.differential.functions import is_test_file, literals_on
from memdoor.review.differential.jsscan import tokens
from memdoor.review.differential.targets import Changed, Language, changed_lines
from memdoor.sandbox.lang import rustscan
from memdoor.sandbox.lang.rustscan import RUST_MAIN

MAX_LITERALS = 12
JS_SUFFIXES = (".js", ".mjs", ".cjs")
_PY_STDIN = re.compile(
    r"\binput\s*\(|\bsys\.stdin\b|\bopen\(\s*0\s*[,)]|\bfileinput\b|from\s+sys\s+import[^\n]{0,200}?\bstdin\b"
)
_JS_STDIN = re.compile(
    r"process\.stdin|readFileSync\(\s*(?:0\s*[,)]|['\"]/dev/stdin['\"]|process\.stdin\.fd)"
    r"|require\(\s*['\"](?:node:)?readline['\"]\s*\)|from\s+['\"](?:node:)?readline['\"]"
)
_RS_STDIN = re.compile(r"\bstdin\s*\(")
RUST_MOD = re.compile(r"^[ \t]*(?:pub(?:\([^)\n]{0,64}\))?\s+)?mod\s+\w+\s*;", re.M)
"""A ``mod name;`` line (each pattern here stays on its line, or is bounded: hostile files cost their length)."""
_ROW_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_ROW_STRING = re.compile(r"\"([^\"\\\n]{1,40})\"|'([^'\\\n]{1,40})'")


def is_js_test(path: str) -> bool:
    """JavaScript test code (``*.test.js``, ``*.spec.js``, files under ``test``, ``tests``, ``__tests__``)."""
    p = PurePosixPath(path)
    return bool(re.search(r"[.-](?:test|spec)\.[cm]?js$", p.name)) or any(
        part in ("test", "tests", "__tests__") for part in p.parts[:-1]
    )


def is_rust_test(path: str) -> bool:
    return any(part in ("tests", "benches") for part in PurePosixPath(path).parts[:-1])


def _module_code(tree: ast.Module) -> bool:
    """Whether the module runs code of its own (a main guard, a call, a loop), not only definitions."""
    for node in tree.body:
        if isinstance(
            node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            if any(isinstance(n, ast.Call) for n in ast.walk(node)):
                return True
            continue
        return True
    return False


def python_program(old: str, new: str) -> bool | None:
    """True: a changed stdin program; False: not one (or unchanged); None: it does not parse."""
    if not _PY_STDIN.search(new):
        return False
    try:
        old_tree, new_tree = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not _module_code(new_tree):
        return False
    return ast.dump(old_tree, include_attributes=False) != ast.dump(new_tree, include_attributes=False)


def _token_texts(language: Language, text: str) -> list[str]:
    """The code without comments and layout (each string one token, ``//`` in it kept)."""
    return [t.text for t in tokens(text)] if language == "javascript" else rustscan.words(text)


def without_comments(language: Language, text: str) -> str:
    """``text`` with its comments blanked (strings kept, ``"http://..."`` too; lines kept)."""
    if language == "rust":
        return rustscan.masked(text, literals=False)
    out, at = [], 0
    for t in tokens(text):
        out += [rustscan.blank(text[at : t.start]), t.text]
        at = t.start + len(t.text)
    return "".join([*out, rustscan.blank(text[at:])])


def _number(text: str) -> int | float | None:
    """The number ``text`` writes; None for one Python does not hold (an integer of more digits than it
    converts, a decimal beyond ``float``'s range)."""
    try:
        v = float(text) if "." in text else int(text)
    except ValueError:
        return None
    return v if not isinstance(v, float) or math.isfinite(v) else None


def line_literals(
    language: Language, old: str, new: str, old_lines: list[int], new_lines: list[int]
) -> list[Any]:
    """Numbers and short strings on the changed lines (the new text's, then the old's)."""
    if language == "python":
        found: list[Any] = []
        for text, lines in ((new, new_lines), (old, old_lines)):
            try:
                found += [v for v in literals_on(ast.parse(text), set(lines)) if v not in found]
            except (SyntaxError, ValueError, RecursionError):
                continue
        return found[:MAX_LITERALS]
    out: list[Any] = []
    for text, lines in ((new, new_lines), (old, old_lines)):
        rows = without_comments(language, text).splitlines()
        for n in lines:
            row = rows[n - 1] if 0 < n <= len(rows) else ""
            for m in _ROW_NUMBER.finditer(row):
                v = _number(m.group())
                if v is not None and v not in out:
                    out.append(v)
            for m in _ROW_STRING.finditer(row):
                s = m.group(1) if m.group(1) is not None else m.group(2)
                if s not in out:
                    out.append(s)
    return out[:MAX_LITERALS]


def program_of(path: str, old: str, new: str) -> Changed | Skipped | None:
    """The changed program at ``path`` (both texts given), a reason it is not compared, or None when the
    file is no standard-input program of the change."""
    language: Language
    if path.endswith(".py"):
        if is_test_file(path):
            return None
        is_program = python_program(old, new)
        if is_program is None:
            return None  # the function comparison says it does not parse
        if not is_program:
            return None
        language = "python"
    elif path.endswith(JS_SUFFIXES):
        if is_js_test(path) or not _JS_STDIN.search(new):
            return None
        language = "javascript"
    elif path.endswith(".rs"):
        if is_rust_test(path) or not RUST_MAIN.search(rustscan.masked(new)) or not _RS_STDIN.search(new):
            return None
        if RUST_MOD.search(new) or RUST_MOD.search(old):
            return Skipped(file=path, reason="a Rust program of several files (mod name;): not compared")
        language = "rust"
    else:
        return None
    if language != "python" and _token_texts(language, old) == _token_texts(language, new):
        return None  # comments or layout only
    old_lines, new_lines = changed_lines(old, new)
    return Changed(
        target="program", language=language, file=path, old_file=path, name=path, old_source=old,
        new_source=new, line=new_lines[0] if new_lines else 1, end_line=max(len(new.splitlines()), 1),
        changed_lines=new_lines, literals=line_literals(language, old, new, old_lines, new_lines),
        why="a standard-input program whose code changed",
    )  # fmt: skip
