"""Standard-input texts for a changed program: mined from the base's tests and examples, made from the
changed lines' literals and a few generic ones (no model needed), and the agents' (a JSON list of strings).

Mined: small example files near the program (``*.in``, ``*.stdin``, ``input*.txt``, ``sample*.txt``, text
files under ``tests``/``examples``/``samples``/``fixtures``/``testdata``) and the string literals the base's
tests feed to it (``input=`` of a subprocess call, ``input:`` of Node's ``execSync``, ``write_stdin(`` of
Rust's ``assert_cmd``, ``StringIO(`` standing in for ``sys.stdin``, ``.stdin.write(``) in test files that
name the program. An agent's answer is read strictly: a JSON list of strings, each one a whole input,
capped in count and size; anything else is refused with its reason. Every text is only ever fed to the
programs as standard input, in the sandbox.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath
from typing import Any

from memdoor.review.diff import FileDiff
from memdoor.review.differential.answers import read_list
from memdoor.review.differential.functions import is_test_file
from memdoor.review.differential.inputs import Call, Read
from memdoor.review.differential.programs import is_js_test, is_rust_test
from memdoor.review.differential.sources import base_texts

MAX_STDIN_CHARS = 4000
"""Longest standard input, ours or an agent's."""
MAX_OWN_STDIN = 24
MAX_MINED_STDIN = 12
GENERIC = ["", "0\n", "1\n", "2\n", "-1\n", "10\n", "1 2\n", "3\n1 2 3\n", "5\n5 1 4 2 3\n", "2\n1 1\n",
           "4\n0 0 0 0\n", "abc\n", "hello world\n", "3\n-1 0 1\n"]  # fmt: skip
EXAMPLE_DIRS = frozenset(
    {"tests", "test", "examples", "example", "samples", "sample", "fixtures", "testdata"}
)
_EXAMPLE_NAME = re.compile(r"(?:^|[_.-])(?:input|in|sample|example|stdin)s?\d*(?:[_.-]|$)", re.IGNORECASE)
_FEED = re.compile(
    r"(?:\binput\s*=\s*|\binput\s*:\s*|write_stdin\s*\(\s*|StringIO\s*\(\s*|stdin\.write\s*\(\s*)"
)
_FED_LITERAL = re.compile(
    r'(?:b|r#*)?(?:"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`$]*`)'
)


def stdin_call(text: str, source: Any = "own", agent: str | None = None) -> Call:
    """One standard input as an input of the stage (its text is the repr of a one-item list)."""
    return Call(text=repr([text]), source=source, agent=agent)


def stdin_of(call: Call) -> str:
    """The standard input a :func:`stdin_call` holds."""
    value = ast.literal_eval(call.text)
    return value[0] if isinstance(value, list) and value and isinstance(value[0], str) else ""


def is_example_file(path: str) -> bool:
    p = PurePosixPath(path)
    if p.suffix in (".in", ".stdin"):
        return True
    if p.suffix != ".txt":
        return False
    return bool(_EXAMPLE_NAME.search(p.stem)) or any(d in EXAMPLE_DIRS for d in p.parts[:-1])


def _is_test_code(path: str) -> bool:
    if path.endswith(".py"):
        return is_test_file(path)
    if path.endswith((".js", ".mjs", ".cjs", ".ts")):
        return is_js_test(path)
    return path.endswith(".rs") and is_rust_test(path)


def _decode(literal: str) -> str | None:
    """The text of a string literal (Python, JavaScript or Rust quoting), or None."""
    raw = re.match(r"r(#*)\"(.*)\"\1$", literal, re.DOTALL)
    if raw:
        return raw.group(2)
    if literal.startswith("`"):
        return literal[1:-1]
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _fed(text: str) -> list[str]:
    """The string literals a test feeds as standard input."""
    out = []
    for m in _FEED.finditer(text):
        s = _FED_LITERAL.match(text, m.end())
        if s is not None and (value := _decode(s.group())) is not None:
            out.append(value)
    return out


def _nearest_first(program: str, path: str) -> tuple[int, str]:
    here = PurePosixPath(program).parent.parts
    there = PurePosixPath(path).parent.parts
    shared = 0
    while shared < min(len(here), len(there)) and here[shared] == there[shared]:
        shared += 1
    return (-shared, path)


def mined_stdin(
    changed: Path, base_dir: Path, files: list[FileDiff], programs: list[str]
) -> dict[str, list[str]]:
    """For each program path, the standard inputs found in the base's examples and tests (distinct, within
    the size cap, the nearest first)."""
    examples = base_texts(changed, base_dir, files, is_example_file, max_files=60, max_chars=120_000)
    tests = base_texts(changed, base_dir, files, _is_test_code, max_files=200)
    out: dict[str, list[str]] = {}
    for program in programs:
        stem = PurePosixPath(program).stem
        found = [t for p in sorted(examples, key=lambda p: _nearest_first(program, p)) for t in [examples[p]]]
        named = [p for p in sorted(tests, key=lambda p: _nearest_first(program, p)) if stem in tests[p]]
        found += [t for p in named for t in _fed(tests[p])]
        keep: list[str] = []
        for t in found:
            if len(t) <= MAX_STDIN_CHARS and t not in keep:
                keep.append(t)
        out[program] = keep[:MAX_MINED_STDIN]
    return out


def _from_literal(v: Any) -> list[str]:
    if isinstance(v, bool):
        return []
    if isinstance(v, int) and abs(v) < 10**9:
        return [f"{v}\n", f"{v - 1}\n", f"{v + 1}\n", f"1\n{v}\n"]
    if isinstance(v, float):
        return [f"{v}\n"]
    if isinstance(v, str) and "\n" not in v and len(v) < 80:
        return [f"{v}\n"]
    return []


def own_stdin(mined: list[str], literals: list[Any], limit: int = MAX_OWN_STDIN) -> list[Call]:
    """Our own inputs: the mined ones, then the changed lines' literals (each, and its neighbours, as a
    line), then the generic ones."""
    texts = [*mined, *(t for v in literals for t in _from_literal(v)), *GENERIC]
    out: list[Call] = []
    for t in texts:
        if t not in (stdin_of(c) for c in out) and len(t) <= MAX_STDIN_CHARS:
            out.append(stdin_call(t))
        if len(out) >= limit:
            break
    return out


def read_stdin_answer(text: str, agent: str, limit: int) -> Read:
    """An agent's standard inputs: a JSON list of strings (or ``{"inputs": [...]}``), read strictly, at most
    ``limit``."""

    def make(item: Any) -> Call | str:
        if not isinstance(item, str):
            return "an input that is not a string"
        if len(item) > MAX_STDIN_CHARS:
            return f"an input over {MAX_STDIN_CHARS} characters"
        return stdin_call(item, "agent", agent)

    return read_list(text, lambda _: True, make, limit)
