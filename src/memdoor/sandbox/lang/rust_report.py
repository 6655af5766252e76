"""A Rust test passes only when libtest itself reports it (issue 41, class 6).

HumanEval-X's harness (``cargo test``) looks only at the exit status, so ``std::process::exit(0)`` in the
function, a panic hook that exits 0 or a ``macro_rules! assert_eq`` of the program's own (which shadows the
standard one in the test module, textually after it) pass there. Here the test module is prepared first
(:func:`prepare`):

- every standard macro it invokes is called by its full path (``::std::assert_eq!``): a macro of the
  program cannot replace it (``::std`` names the standard crate, never an item of the program);
- after its ``use super::*;`` comes ``use ::std::prelude::rust_2021::*;``: a program item named like a
  prelude item the test uses (a ``struct String`` of its own with an always-true ``PartialEq``) makes the
  name ambiguous, so the tests do not build, instead of replacing it;
- each ``#[test]`` function gets a random suffix per run, so the names libtest will report are not in the
  prompt (the program would have to read its own binary to learn them).

Then the run must show libtest's own lines (:func:`missing`): ``test <module>::<name> ... ok`` for every
expected test and ``test result: ok. N passed; 0 failed`` with N at least their number (the program's own tests run
too, as officially). An early exit, a panic hook
that exits, an abort: libtest never writes them. A program that writes libtest's report itself after
finding the names in its own binary is not stopped: it runs as native code in the test's process.
"""

from __future__ import annotations

import re
import secrets

STD_MACROS = (
    "assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne", "panic",
    "vec", "format", "matches", "unreachable", "unimplemented", "todo", "println", "print", "eprintln",
    "eprint", "write", "writeln", "dbg", "concat", "stringify",
)  # fmt: skip
_MACRO_CALL = re.compile(rf"(?<![\w:$])({'|'.join(STD_MACROS)})(\s*!\s*[(\[{{])")
_USE_SUPER = re.compile(r"^([ \t]*)use\s+super::\*\s*;", re.M)
_GAP = r"(?:\s|//[^\n]*\n|#\[[^\]]*\])*"  # blanks, line comments, other attributes
_TEST_FN = re.compile(rf"(#\[test\]{_GAP}(?:pub(?:\([^)]*\))?\s+)?fn\s+)([A-Za-z_]\w*)")
_MODULE = re.compile(r"\bmod\s+([A-Za-z_]\w*)\s*\{")
_SUMMARY = re.compile(r"^test result: ok\. (\d+) passed; 0 failed;")
PRELUDE = "use ::std::prelude::rust_2021::*;"


def _mask(code: str) -> str:
    """``code`` with its comments (nested block comments too) and the contents of its string and character
    literals blanked, same length and lines: where the patterns below may match (Rust/32's whole test is
    commented out; Rust/160 compares strings such as ``"//"``)."""
    out = list(code)
    i, n = 0, len(code)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif code.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if code.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif code.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(code, i)) and (i == 0 or not code[i - 1].isalnum()):
            close = '"' + m.group(1)
            j = code.find(close, m.end())
            j = n if j < 0 else j + len(close)
            blank(m.end(), j - len(close))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            if code.startswith("\\", i + 1):
                j = code.find("'", i + 3)
                j = n if j < 0 else j
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and code[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:  # a lifetime
                i += 1
        else:
            i += 1
    return "".join(out)


def _modules_at(masked: str, at: int) -> list[str]:
    """The path of the modules open at ``at`` (``mod tests { mod inner { ... } }``: ``tests``, ``inner``)."""
    opened: list[tuple[str, int]] = []  # (module, brace depth inside it)
    depth = 0
    starts = {m.end() - 1: m.group(1) for m in _MODULE.finditer(masked, 0, at)}
    for i in range(at):
        c = masked[i]
        if c == "{":
            depth += 1
            if i in starts:
                opened.append((starts[i], depth))
        elif c == "}":
            if opened and opened[-1][1] == depth:
                opened.pop()
            depth -= 1
    return [name for name, _ in opened]


def prepare(test_code: str) -> tuple[str, list[str]]:
    """The test code as it is built here, and the full names of the tests libtest must report."""
    suffix = "_m" + secrets.token_hex(8)
    masked = _mask(test_code)
    edits: list[tuple[int, str]] = [(m.start(), "::std::") for m in _MACRO_CALL.finditer(masked)]
    edits += [(m.end(), " " + PRELUDE) for m in _USE_SUPER.finditer(masked)]
    names: list[str] = []
    for m in _TEST_FN.finditer(masked):
        names.append("::".join([*_modules_at(masked, m.start()), m.group(2) + suffix]))
        edits.append((m.end(), suffix))
    code = test_code
    for at, text in sorted(edits, reverse=True):
        code = code[:at] + text + code[at:]
    return code, names


def missing(stdout: bytes, expected: list[str]) -> str | None:
    """What libtest's report lacks for the ``expected`` tests (None: each one's ``... ok`` line and the
    summary counting them all, with nothing failed)."""
    lines = set(stdout.decode(errors="replace").splitlines())
    absent = [name for name in expected if f"test {name} ... ok" not in lines]
    if absent:
        return f"libtest never reported {absent[0]} as ok"
    counts = [int(m.group(1)) for line in lines if (m := _SUMMARY.match(line))]
    if not any(n >= len(expected) for n in counts):  # the program's own tests, if any, run too (officially)
        return f"libtest's summary 'test result: ok. {len(expected)} passed; 0 failed' is missing"
    return None
