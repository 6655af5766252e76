"""What a coding request asks for, and the examples it shows, as tests a team can run.

Three questions about a request's text, each answered conservatively (a wrong test would steer the
whole team wrong, so anything ambiguous is left out):

- :func:`find_target` — which function to write: a ``def`` in a code block (a ``class Solution``
  method for LeetCode-style starters), a backticked signature such as ```is_prime(n: int) -> bool```,
  a ``def name(`` in the text, "a function named X", or the function the examples call;
- :func:`functional_examples` — calls with results: ``>>> f(1)`` / ``2``, ``f(1) == 2`` (also as
  ``assert`` lines), and LeetCode's ``Input: a = 1, b = 2`` / ``Output: 3`` (arguments by name, put
  in the signature's order);
- :func:`stdin_examples` — ``Input`` / ``Output`` (or ``Sample Input 1`` / ``Sample Output 1``)
  blocks for a program that reads standard input.

Values may be written as Python or JSON literals (``true``, ``null``); results must be JSON-able,
since functional tests compare ``json.loads(expected)``.
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memdoor.problems.humaneval import docstring_examples
from memdoor.problems.model import TestCase

DEFAULT_FUNCTION = "solution"
"""The name asked for when a request wants a function but names none."""

_BUILTINS = frozenset(dir(builtins)) | {"main"}
_FENCED = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)
_BACKTICK_SIG = re.compile(r"`(?:def\s+)?([A-Za-z_]\w*)\s*\(([^`()]*)\)\s*(?:->\s*([^`]+?))?\s*:?`")
_TEXT_DEF = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(([^()]*)\)")
_NAMED = re.compile(r"\b(?:function|method)\s+(?:(?:named|called)\s+`?([A-Za-z_]\w*)`?|`([A-Za-z_]\w*)`)")
_WANTS_FUNCTION = re.compile(r"\b(?:function|method)\b", re.IGNORECASE)
_CALL_START = re.compile(r"^(?:>>>\s*)?([A-Za-z_]\w*)\s*\(")
_ARROW = re.compile(r"\s*(?:==>|==|➞|->|=>|should return|returns|should be)\s*")
_NOISE = re.compile(
    r"^(?:[-*•]\s+|\d+[.)]\s+|e\.g\.,?\s*|for example,?\s*|example\s*\d*\s*:\s*)", re.IGNORECASE
)
_MARK = re.compile(
    r"^(?P<sample>sample|example)?\s*(?P<kind>input|output)s?\s*(?P<num>#?\s*\d+)?\s*[*_`]*"
    r"(?::[*_`]*\s*(?P<inline>.*?))?[*_`]*\s*$",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:[#>*_`\s]+|[-•]\s+|\d+[.)]\s+)+")
_ASSIGN = re.compile(r"^\s*[A-Za-z_]\w*\s*=(?!=)")


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


def code_blocks(text: str) -> list[str]:
    """The contents of the fenced code blocks of ``text``, in order."""
    return [m.group(1) for m in _FENCED.finditer(text)]


def _parse_code(code: str) -> ast.Module | None:
    """``code`` parsed; a block ending with a bare signature (LeetCode starter) gets a ``pass`` body."""
    try:
        return ast.parse(code)
    except SyntaxError:
        pass
    lines = [ln for ln in code.rstrip().splitlines() if ln.strip()]
    if not lines:
        return None
    indent = len(lines[-1]) - len(lines[-1].lstrip())
    try:
        return ast.parse(code.rstrip() + "\n" + " " * (indent + 4) + "pass\n")
    except SyntaxError:
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


def _from_code(code: str) -> Target | None:
    """The function a code block asks for: a ``class Solution`` method, else its last unfinished
    top-level function (HumanEval prompts may define helpers first), else its last function."""
    tree = _parse_code(code)
    if tree is None:
        return None
    starter = code.strip("\n").rstrip() + "\n"
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Solution":
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not item.name.startswith("_"):
                    return Target(item.name, starter, _params(item, method=True), "code")
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not funcs:
        return None
    fn = next((f for f in reversed(funcs) if _unimplemented(f)), funcs[-1])
    return Target(fn.name, starter, _params(fn, method=False), "code")


def _signature_params(name: str, params: str) -> tuple[str, ...] | None:
    try:
        tree = ast.parse(f"def {name}({params}): pass")
    except SyntaxError:
        return None
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    return _params(fn, method=False)


def _usable(name: str) -> bool:
    return not keyword.iskeyword(name) and name not in _BUILTINS


def _signature_starter(name: str, params: str, ret: str | None) -> str:
    line = f"def {name}({params.strip()})" + (f" -> {ret.strip()}" if ret else "") + ":"
    try:
        ast.parse(line + "\n    pass\n")
    except SyntaxError:
        return ""
    return line + "\n    "


def _example_calls(text: str) -> Counter[str]:
    """Names called at the start of example lines (``>>> f(1)``, ``f(1) == 2``, ``assert f(1) == 2``)."""
    names: Counter[str] = Counter()
    for line in _normalized_lines(text):
        m = _CALL_START.match(line)
        if m and _usable(m.group(1)) and (line.startswith(">>>") or _ARROW.search(line[m.end() :])):
            names[m.group(1)] += 1
    return names


def find_target(text: str) -> Target:
    """The function ``text`` asks for, or ``Target(None)`` for a program reading standard input."""
    for block in reversed(code_blocks(text)):
        found = _from_code(block)
        if found is not None:
            return found
    for m in _BACKTICK_SIG.finditer(text):
        name = m.group(1)
        if _usable(name):
            params = _signature_params(name, m.group(2))
            return Target(name, _signature_starter(name, m.group(2), m.group(3)), params, "signature")
    for m in _TEXT_DEF.finditer(text):
        if _usable(m.group(1)):
            return Target(m.group(1), "", _signature_params(m.group(1), m.group(2)), "def")
    for m in _NAMED.finditer(text):
        name = m.group(1) or m.group(2)
        if _usable(name):
            return Target(name, "", None, "named")
    calls = _example_calls(text)
    if calls:
        return Target(calls.most_common(1)[0][0], "", None, "examples")
    return Target(None)


def wants_function(text: str) -> bool:
    """Whether the request speaks of writing a function or method (used when it names none)."""
    return bool(_WANTS_FUNCTION.search(text))


# ----------------------------------------------------------------------------------------------
# Literal values, Python or JSON spelling.

_JSON_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class _NotLiteral(ValueError):
    pass


def _value(node: ast.AST) -> Any:
    """A literal value from an expression node; JSON's true/false/null accepted as names."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral("dict unpacking")
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _value(node.operand)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    raise _NotLiteral(type(node).__name__)


def parse_value(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one literal (a trailing period is allowed), else ``(False, None)``."""
    text = text.strip().rstrip(".").strip().strip("`").strip()
    if not text:
        return False, None
    try:
        return True, _value(ast.parse(text, mode="eval").body)
    except (SyntaxError, _NotLiteral, RecursionError, MemoryError, ValueError):
        return False, None


def _json(value: Any) -> str | None:
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


# ----------------------------------------------------------------------------------------------
# Functional examples.


def _assert_line(line: str) -> str:
    """``assert f(1) == 2, "msg"`` → ``f(1) == 2``; other lines unchanged."""
    if not line.startswith("assert "):
        return line
    try:
        stmt = ast.parse(line).body[0]
    except (SyntaxError, IndexError):
        return line[len("assert ") :]
    if (
        isinstance(stmt, ast.Assert)
        and isinstance(stmt.test, ast.Compare)
        and len(stmt.test.ops) == 1
        and isinstance(stmt.test.ops[0], ast.Eq)
    ):
        return f"{ast.unparse(stmt.test.left)} == {ast.unparse(stmt.test.comparators[0])}"
    return line


def _normalized_lines(text: str) -> list[str]:
    """Lines with list markers, "e.g.", markdown emphasis and wrapping backticks removed."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        line = _NOISE.sub("", line).strip()
        if line.startswith("`") and line.endswith("`") and line.count("`") == 2:
            line = line[1:-1].strip()
        out.append(_assert_line(line))
    return out


def _plain(line: str) -> str:
    """A line without leading markdown (headings, emphasis, quotes, list markers) or an ``Example 1:``
    lead, so ``**Input:** x = 1`` and ``- Example 2: Input: 5`` read as markers."""
    return _NOISE.sub("", _LEAD.sub("", line.strip())).strip()


def _call_args(text: str, params: tuple[str, ...] | None) -> list[Any] | None:
    """Arguments from ``a = 1, b = [2]`` (named; put in ``params`` order) or ``1, [2]`` (positional)."""
    try:
        call = ast.parse(f"_f({text})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    try:
        positional = [_value(a) for a in call.args]
        named = {k.arg: _value(k.value) for k in call.keywords if k.arg is not None}
    except _NotLiteral:
        return None
    if len(named) != len(call.keywords):
        return None
    if not named:
        return positional
    if positional:
        return None
    if params is None:
        return list(named.values())
    if set(named) != set(params):
        return None
    return [named[p] for p in params]


def _leetcode_examples(text: str, params: tuple[str, ...] | None) -> list[tuple[list[Any], Any]]:
    """``Input: ...`` lines followed (within two lines) by ``Output: ...`` lines."""
    lines = [_plain(ln) for ln in text.splitlines()]
    found = []
    for i, line in enumerate(lines):
        m = _MARK.match(line)
        if not m or m["kind"].lower() != "input" or not m["inline"]:
            continue
        for nxt in lines[i + 1 : i + 3]:
            mo = _MARK.match(nxt)
            if mo and mo["kind"].lower() == "output" and mo["inline"]:
                args = _call_args(m["inline"], params)
                ok, expected = parse_value(mo["inline"])
                if args is not None and ok:
                    found.append((args, expected))
                break
    return found


def functional_examples(text: str, target: Target) -> list[TestCase]:
    """Tests calling ``target.func_name`` from the examples in ``text`` (no duplicates, text order)."""
    name = target.func_name
    if not name:
        return []
    tests: list[TestCase] = []
    seen: set[tuple[str, str | None]] = set()

    def add(test: TestCase) -> None:
        if (test.input, test.output) not in seen:
            seen.add((test.input, test.output))
            tests.append(test)

    for t in docstring_examples("\n".join(_normalized_lines(text)), name):
        add(t)
    for args, expected in _leetcode_examples(text, target.params):
        inputs = [_json(a) for a in args]
        output = _json(expected)
        if output is not None and all(i is not None for i in inputs):
            add(TestCase(kind="functional", input="\n".join(inputs), output=output))  # type: ignore[arg-type]
    return tests


# ----------------------------------------------------------------------------------------------
# Standard-input examples.


def _block_after(lines: list[str], start: int) -> tuple[str | None, int]:
    """The example text starting at ``lines[start]``: a fenced block, or the lines up to a blank line
    or the next marker. Returns (text or None, index after it)."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None, i
    if lines[i].strip().startswith("```"):
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i])
            i += 1
        return "\n".join(body), i + 1
    body = []
    while i < len(lines) and lines[i].strip() and not _MARK.match(_plain(lines[i])):
        body.append(lines[i].strip())
        i += 1
    return ("\n".join(body) if body else None), i


def _prose(block: str) -> bool:
    """A sentence rather than program output: a sample with an empty output is followed by the
    statement's explanation ("In this example, the final S is empty."), which must not become a test."""
    first = block.strip().splitlines()[0] if block.strip() else ""
    words = first.split()
    wordy = sum(w.strip(".,;:!?'\"()").isalpha() for w in words)
    return len(words) >= 4 and first.rstrip().endswith((".", ":")) and wordy * 2 > len(words)


def _markers(lines: list[str]) -> list[tuple[int, re.Match[str]]]:
    """Input/Output marker lines. When some are samples (``Sample Input 1``, ``Example 2``,
    ``Input 1``), only those: a statement's bare ``Input`` / ``Output`` sections describe the format."""
    found = [(i, m) for i, line in enumerate(lines) if (m := _MARK.match(_plain(line)))]
    samples = [(i, m) for i, m in found if m["sample"] or m["num"]]
    return samples or found


def stdin_examples(text: str) -> list[TestCase]:
    """``Input``/``Output`` example pairs, in order, as stdin tests. Left out: inputs that look like
    LeetCode arguments (``nums = [1, 2]``), and outputs that read as prose (see :func:`_prose`)."""
    lines = text.splitlines()
    tests: list[TestCase] = []
    pending: str | None = None
    for i, m in _markers(lines):
        inline = m["inline"]
        content = inline.strip() if inline and inline.strip() else _block_after(lines, i + 1)[0]
        if content is None:
            continue
        if m["kind"].lower() == "input":
            pending = content
        elif pending is not None:
            if not _ASSIGN.match(pending) and not _prose(content):
                tests.append(TestCase(kind="stdin", input=pending.rstrip("\n") + "\n", output=content))
            pending = None
    return tests
