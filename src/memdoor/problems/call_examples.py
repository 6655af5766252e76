"""Functional examples in a request: calls with their results, as tests of the function asked for.

Read: doctest lines (``>>> f(1)`` / ``2``), LeetCode's ``Input: a = 1, b = 2`` / ``Output: 3`` (arguments
by name, put in the signature's order), calls joined to a result anywhere in a line (``f(1) == 2``,
``f(1) -> 2``, ``f(15)  # returns "1111"``, ``assert`` lines), and ``For x = 1 the output should be 2``.

The work is linear in the request, whatever it holds (a request is untrusted input, read by ``memdoor serve``
before it answers anyone): the regular expressions do not backtrack over a line more than a bounded number of
times, the brackets of a line are matched in one pass over them (:func:`_closings`), calls written with their
result are read in the first :data:`MAX_CALL_TEXT` characters of a request (a line the limit cuts is left out
whole), and at most :data:`MAX_PARSE_CHARS` characters of such calls and their results are parsed by each
reader (a ``For …`` line's arguments over :data:`_VALUE_CHARS` characters are not read). A longer request is
still read, and answered; only the calls written past that are not.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from typing import Any

from memdoor.core.problem import TestCase
from memdoor.problems.doctests import docstring_examples
from memdoor.problems.literals import UNPARSABLE, json_input, parse_value, to_json
from memdoor.problems.request_lines import ASSIGN, MARK, MAX_INLINE, call_args, normalized_lines, plain
from memdoor.problems.signatures import Target


def _leetcode_examples(text: str, params: tuple[str, ...] | None) -> list[tuple[list[Any], Any]]:
    """``Input: ...`` lines followed (within two lines) by ``Output: ...`` lines."""
    lines = [plain(ln) for ln in text.splitlines()]
    found = []
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m or m["kind"].lower() != "input" or not m["inline"]:
            continue
        for nxt in lines[i + 1 : i + 3]:
            mo = MARK.match(nxt)
            if mo and mo["kind"].lower() == "output" and mo["inline"]:
                args = call_args(m["inline"], params)
                ok, expected = parse_value(mo["inline"])
                if args is not None and ok:
                    found.append((args, expected))
                break
    return found


_EXAMPLE_ARROW = re.compile(
    r"\s*(?:#\s*)?(?:==>|==|➞|→|->|=>|=|should\s+return\b|should\s+be\b|returns\b|gives\b|is\b|evaluates\s+to\b)\s*",
    re.IGNORECASE,
)
"""What joins an example call to its result; the arrow may sit in a comment (``f(15)  # returns "1111"``)."""
_FOR_EXAMPLE = re.compile(
    r"^for\s++(?P<args>.+?)(?<!\s)(?:\s*+,)?\s++the\s++(?:output|result|answer)\s++(?:should|will|would)"
    r"\s++be\s*+:?\s*+(?P<out>.+)$",
    re.IGNORECASE,
)
"""``For lst = [1, 2] the output should be 3`` (arguments by name). Possessive, and the arguments end after a
character that is not blank: no run of blanks is read more than twice (``For`` and 300 KB of spaces once took
this hours)."""
_WORKED = re.compile(r"^(?P<sum>[\d\s+\-*/().]+?)\s*=\s*(?P<value>-?[\d.]+)\s*[.,;]?\s*$")
"""A worked result, ``19 - 5 - 6 = 8``: the arithmetic, then its value."""
_QUOTES = "'\""
_VALUE_CHARS = 2000
"""Longest example call or value read from a line."""
_CUTS = 40
"""Places where a value may end that are tried (then the rest of the text as a whole)."""
MAX_CALL_TEXT = 100_000
"""Characters of a request read for calls written with their result (``f(1) == 2``), at most: matching a
line's brackets is a pass over them in Python."""
MAX_CALLS = 2 * MAX_INLINE
"""Calls followed by a result (an arrow, ``=``) of :data:`_VALUE_CHARS` characters each that one reader
parses in one request, at most: the reader's budget is :data:`MAX_PARSE_CHARS`."""
MAX_PARSE_CHARS = MAX_CALLS * _VALUE_CHARS
"""Characters of calls and of their results one reader parses in one request, at most (a result costs up to
a few dozen parses of what it is charged); short calls that do not parse cost little, so an example after
hundreds of them is still read. The calls after the budget is spent are not read."""
_MARKS = re.compile(r"[()\[\]{}'\"\\]")
"""What matching brackets reads: brackets, quotes, backslashes."""


def _closings(line: str) -> dict[int, int]:
    """Where the brackets of ``line`` close: index of an opening bracket → index of the bracket closing it,
    for those that close, each read as from itself with no string open (strings skipped, a backslash in a
    string escaping the next character; kinds of bracket not told apart).

    One pass over the line's marks (:data:`_MARKS`) from its end, however many calls the line holds:
    ``stop[k]`` is the mark a reading that starts at mark ``k`` outside any string stops at (the first
    closing bracket it meets at its own depth); an opening bracket's reading jumps from where it closes,
    a quote's from where its string ends (``ends[q][k]``: the mark ending a ``q`` string read from mark ``k``).
    """
    at = [m.start() for m in _MARKS.finditer(line)]
    n = len(at)
    stop: list[int | None] = [None] * (n + 2)
    ends: dict[str, list[int | None]] = {q: [None] * (n + 2) for q in _QUOTES}
    closes: dict[int, int] = {}
    for k in range(n - 1, -1, -1):
        c = line[at[k]]
        escaped = k + 2 if k + 1 < n and at[k + 1] == at[k] + 1 else k + 1  # the mark after "\\x"
        for q, end in ends.items():
            end[k] = k if c == q else end[escaped] if c == "\\" else end[k + 1]
        if c in ")]}":
            stop[k] = k
        elif c in "([{":
            inner = stop[k + 1]
            if inner is not None:
                closes[at[k]] = at[inner]
                stop[k] = stop[inner + 1]
        elif c in _QUOTES:
            last = ends[c][k + 1]
            stop[k] = None if last is None else stop[last + 1]
        else:  # a backslash outside a string
            stop[k] = stop[k + 1]
    return closes


def _closing(closes: dict[int, int], open_at: int) -> int | None:
    """The index of the bracket closing the one at ``open_at`` (within ``_VALUE_CHARS``), or None;
    ``closes`` is the line's :func:`_closings`."""
    end = closes.get(open_at)
    return end if end is not None and end < open_at + _VALUE_CHARS else None


def _arithmetic(node: ast.AST) -> float:
    """The value of an expression of number literals and ``+ - * / //`` (ValueError for anything else)."""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _arithmetic(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(
        node.op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.FloorDiv
    ):
        a, b = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if b == 0:
            raise ValueError("division by zero")
        return a / b if isinstance(node.op, ast.Div) else a // b
    raise ValueError(type(node).__name__)


def _worked_value(text: str) -> int | float | None:
    """The value of a worked result such as ``19 - 5 - 6 = 8``, when the arithmetic gives it (a sum that
    does not is a formula or a typo, and no example)."""
    m = _WORKED.match(text.strip()[:200])
    if not m:
        return None
    ok, value = parse_value(m["value"])
    if not ok or not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        total = _arithmetic(ast.parse(m["sum"].strip(), mode="eval").body)
    except (*UNPARSABLE, ValueError, OverflowError):
        return None
    return value if total == value else None


def _first_value(text: str) -> tuple[bool, Any]:
    """The shortest literal at the start of ``text`` that ends at a space, ``,;)`` or a full stop and
    is followed by nothing, punctuation, a comment or a word (not an operator); or the value of a worked
    result (``19 - 5 - 6 = 8``)."""
    text = text[:_VALUE_CHARS]
    worked = _worked_value(text)
    if worked is not None:
        return True, worked
    cuts = [
        i for i, c in enumerate(text) if c in " \t,;)" or (c == "." and not text[i + 1 : i + 2].isdigit())
    ]
    for cut in [*cuts[:_CUTS], len(text)]:
        rest = text[cut:].lstrip()
        if rest and not (rest[0] in ",;.)(#" or rest[0].isalpha()):
            continue  # "19 - 5 - 6": an expression, not a value
        if cut and text[:cut].strip():
            ok, value = parse_value(text[:cut])
            if ok:
                return ok, value
    return False, None


def _call_lines(text: str, call: re.Pattern[str]) -> Iterator[tuple[str, dict[int, int], re.Match[str]]]:
    """``(line, its closings, a call)`` for the calls ``call`` finds in the first :data:`MAX_CALL_TEXT`
    characters of ``text`` (backticks left out)."""
    head = text[:MAX_CALL_TEXT]
    if len(text) > MAX_CALL_TEXT:  # a line the cap cuts is left out whole: "f(1) == 12|345" is no example
        head = head.rpartition("\n")[0]
    for raw in head.splitlines():
        line = raw.replace("`", "")
        calls = list(call.finditer(line))
        if calls:
            closes = _closings(line)
            for m in calls:
                yield line, closes, m


def _defined_by_formula(text: str, name: str, call: re.Pattern[str]) -> bool:
    """Whether ``text`` defines ``name`` by a formula (``tri(n) = 1 + n / 2``): its ``f(1) = 3`` lines
    are then values of the formula, not necessarily of the function asked for."""
    spent = 0
    for line, closes, m in _call_lines(text, call):
        end = _closing(closes, m.end() - 1)
        if end is None or not re.match(r"\s*=(?!=)", line[end + 1 : end + 20]):
            continue
        spent += 1 + end - m.end()
        if spent > MAX_PARSE_CHARS:
            break
        if call_args(line[m.end() : end], None) is None:
            return True
    return False


def _inline_examples(text: str, target: Target) -> list[tuple[list[Any], Any]]:
    """Examples anywhere in a line: ``f(1) == 2``, ``f(1) -> 2``, ``f(1) = 2``, ``f(1) → 2``, ``f(1)
    returns 2``, ``f(1) should return 2``, ``f(1) is 2`` (backticks ignored; ``>>>`` lines are read
    by the docstring reader)."""
    name = target.func_name or ""
    call = re.compile(rf"(?<![\w.]){re.escape(name)}\(")
    found = []
    defined = _defined_by_formula(text, name, call)
    spent = 0
    for line, closes, m in _call_lines(text, call):
        if line.lstrip().startswith(">>>"):
            continue
        end = _closing(closes, m.end() - 1)
        if end is None:
            continue
        arrow = _EXAMPLE_ARROW.match(line, end + 1)
        if not arrow or (defined and arrow.group(0).strip() == "="):
            continue
        value = line[arrow.end() : arrow.end() + _VALUE_CHARS]
        spent += 1 + end - m.end() + len(value)
        if spent > MAX_PARSE_CHARS:
            break
        args = call_args(line[m.end() : end], target.params)
        ok, expected = _first_value(value)
        if args is not None and ok:
            found.append((args, expected))
            if len(found) >= MAX_INLINE:
                return found
    return found


def _for_examples(text: str, params: tuple[str, ...] | None) -> list[tuple[list[Any], Any]]:
    """``For x = 1, y = [2] the output should be 3`` lines: every parameter given by name (words after
    the arguments, ``For N = 5, the sum is 5 the output should be "101"``, are left out)."""
    if not params:
        return []
    found = []
    for line in normalized_lines(text):
        m = _FOR_EXAMPLE.match(line)
        if not m:
            continue
        text_args = m["args"]
        if len(text_args) > _VALUE_CHARS:
            continue
        commas = (i for i in range(len(text_args) - 1, 0, -1) if text_args[i] == ",")
        ends = [len(text_args), *itertools.islice(commas, _CUTS)]
        args = next((a for e in ends if (a := call_args(text_args[:e], params)) is not None), None)
        ok, expected = _first_value(m["out"])
        if args is not None and len(args) == len(params) and ok and ASSIGN.match(text_args):
            found.append((args, expected))
            if len(found) >= MAX_INLINE:
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

    for t in docstring_examples("\n".join(normalized_lines(text)), name):
        add(t)
    found = [
        *_leetcode_examples(text, target.params),
        *_inline_examples(text, target),
        *_for_examples(text, target.params),
    ]
    for args, expected in found:
        given, output = json_input(args), to_json(expected)
        if given is not None and output is not None:
            add(TestCase(kind="functional", input=given, output=output))
    return tests
