"""Reading a request's text line by line: its fenced code blocks, its lines without markdown, the
``Input``/``Output`` markers, call arguments (``a = 1, b = [2]``) and the names its example lines call.

A request is untrusted text (``memdoor serve`` reads it before it answers anyone): no regular expression
here reads a line, or a run of blanks, again and again (work growing with its square or cube).
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections import Counter
from typing import Any

from memdoor.problems.literals import UNPARSABLE, NotLiteral, literal_value

MAX_INLINE = 100
"""Examples read from the lines of one request, at most."""
_BUILTINS = frozenset(dir(builtins)) | {"main"}
FENCED = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)
"""A fenced code block (its contents: group 1)."""
_CALL_START = re.compile(r"^(?:>>>\s*)?([A-Za-z_]\w*)\s*\(")
_ARROW = re.compile(r"==>|==|➞|->|=>|should return|returns|should be")
"""An arrow after an example call (searched for: blanks around it would be read again from every blank)."""
_NOISE = re.compile(
    r"^(?:[-*•]\s+|\d+[.)]\s+|e\.g\.,?\s*|for example,?\s*|example\s*+\d*+\s*+:\s*)", re.IGNORECASE
)
MARK = re.compile(
    r"^(?P<sample>sample|example)?\s*+(?P<kind>input|output)s?\s*+(?P<num>#?\s*+\d++)?\s*+[*_`]*+"
    r"(?::[*_`]*+\s*+(?P<inline>(?:[*_`\s]*+[^*_`\s])*+(?:[*_`]*+\s++(?=[*_`]))*+))?[*_`]*+\s*+$",
    re.IGNORECASE,
)
"""An ``Input``/``Output`` marker line (``Sample Input 1``, ``Output: 3``), its text after a colon as ``inline``
(without the emphasis and blanks that end the line). Possessive: no part of a line is read more than twice
(``Input``, 8 KB of spaces and a letter once took a quarter of an hour)."""
_LEAD = re.compile(r"^(?:[#>*_`\s]+|[-•]\s+|\d+[.)]\s+)+")
ASSIGN = re.compile(r"^\s*[A-Za-z_]\w*\s*=(?!=)")
"""A line starting ``name =`` (LeetCode's arguments by name, not standard input)."""


def code_blocks(text: str) -> list[str]:
    """The contents of the fenced code blocks of ``text``, in order."""
    return [m.group(1) for m in FENCED.finditer(text)]


def usable(name: str) -> bool:
    """A name a requested function may have: no keyword, no builtin."""
    return not keyword.iskeyword(name) and name not in _BUILTINS


def example_calls(text: str) -> Counter[str]:
    """Names called at the start of example lines (``>>> f(1)``, ``f(1) == 2``, ``assert f(1) == 2``)."""
    names: Counter[str] = Counter()
    for line in normalized_lines(text):
        m = _CALL_START.match(line)
        if m and usable(m.group(1)) and (line.startswith(">>>") or _ARROW.search(line[m.end() :])):
            names[m.group(1)] += 1
    return names


def _assert_line(line: str) -> str:
    """``assert f(1) == 2, "msg"`` → ``f(1) == 2``; other lines unchanged."""
    if not line.startswith("assert "):
        return line
    try:
        stmt = ast.parse(line).body[0]
    except (*UNPARSABLE, IndexError):
        return line[len("assert ") :]
    if (
        isinstance(stmt, ast.Assert)
        and isinstance(stmt.test, ast.Compare)
        and len(stmt.test.ops) == 1
        and isinstance(stmt.test.ops[0], ast.Eq)
    ):
        return f"{ast.unparse(stmt.test.left)} == {ast.unparse(stmt.test.comparators[0])}"
    return line


def normalized_lines(text: str) -> list[str]:
    """Lines with list markers, "e.g.", markdown emphasis and wrapping backticks removed."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        line = _NOISE.sub("", line).strip()
        if line.startswith("`") and line.endswith("`") and line.count("`") == 2:
            line = line[1:-1].strip()
        out.append(_assert_line(line))
    return out


def plain(line: str) -> str:
    """A line without leading markdown (headings, emphasis, quotes, list markers) or an ``Example 1:``
    lead, so ``**Input:** x = 1`` and ``- Example 2: Input: 5`` read as markers."""
    return _NOISE.sub("", _LEAD.sub("", line.strip())).strip()


def call_args(text: str, params: tuple[str, ...] | None) -> list[Any] | None:
    """Arguments from ``a = 1, b = [2]`` (named; put in ``params`` order) or ``1, [2]`` (positional)."""
    try:
        call = ast.parse(f"_f({text})", mode="eval").body
    except UNPARSABLE:
        return None
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    try:
        positional = [literal_value(a) for a in call.args]
        named = {k.arg: literal_value(k.value) for k in call.keywords if k.arg is not None}
    except (NotLiteral, RecursionError):
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
