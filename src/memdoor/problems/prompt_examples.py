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
import bisect
import builtins
import itertools
import json
import keyword
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memdoor.core.problem import TestCase
from memdoor.problems.doctests import docstring_examples

DEFAULT_FUNCTION = "solution"
"""The placeholder name of a function a request wants but does not name (the team then chooses the
real name, and the answer says so: :mod:`memdoor.strategies.naming`)."""

_BUILTINS = frozenset(dir(builtins)) | {"main"}
_UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
"""What parsing untrusted text may raise (too deep an expression, a NUL byte, ...)."""
_FENCED = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)
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
    except _UNPARSABLE:
        pass
    lines = [ln for ln in code.rstrip().splitlines() if ln.strip()]
    if not lines:
        return None
    indent = len(lines[-1]) - len(lines[-1].lstrip())
    try:
        return ast.parse(code.rstrip() + "\n" + " " * (indent + 4) + "pass\n")
    except _UNPARSABLE:
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


def _from_code(code: str) -> tuple[Target, bool, set[str]] | None:
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


def _signature_params(name: str, params: str) -> tuple[str, ...] | None:
    """The parameter names of ``name(params)`` (a leading ``self``/``cls`` left out), None when they
    do not parse as a parameter list."""
    try:
        tree = ast.parse(f"def {name}({params}): pass")
    except _UNPARSABLE:
        return None
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    return _params(fn, method=_is_method(params))


def _is_method(params: str) -> bool:
    return params.strip().split(",")[0].split(":")[0].strip() in ("self", "cls")


def _usable(name: str) -> bool:
    return not keyword.iskeyword(name) and name not in _BUILTINS


def _signature_starter(name: str, params: str, ret: str | None) -> str:
    line = f"def {name}({params.strip()})" + (f" -> {ret.strip()}" if ret else "") + ":"
    try:
        ast.parse(line + "\n    pass\n")
    except _UNPARSABLE:
        return ""
    return line + "\n    "


def example_calls(text: str) -> Counter[str]:
    """Names called at the start of example lines (``>>> f(1)``, ``f(1) == 2``, ``assert f(1) == 2``)."""
    names: Counter[str] = Counter()
    for line in _normalized_lines(text):
        m = _CALL_START.match(line)
        if m and _usable(m.group(1)) and (line.startswith(">>>") or _ARROW.search(line[m.end() :])):
            names[m.group(1)] += 1
    return names


# Mentions of a function in the prose of a request, and how strongly the request asks for each.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_MENTIONS = 1000
"""Signatures and names read from one request, at most (of each kind): a bound on the work."""
_LOOK = 300
"""Characters read around a mention (the words before it, the annotation after it)."""
_MATH = re.compile(r"\$[^$\n]*\$")
_PROSE_SIG = re.compile(r"(?<![\w.$\\])(?:(def)\s+)?(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\(([^()\n]*)\)")
_NAMES = [
    # function `name` / function named name / method called name / func name
    re.compile(
        r"\b(?:function|method|func)\s+(?:(?P<how>named|called)\s+)?(?P<tick>[`*]*)(?P<name>[A-Za-z_]\w*)[`*]*",
        re.IGNORECASE,
    ),
    # the function should be called name / name the function name / function name: name
    re.compile(
        r"\b(?:function|method)\b[^.\n]{0,40}?\b(?:be|is)\s+(?P<how>named|called)\s+(?P<tick>[`*]*)"
        r"(?P<name>[A-Za-z_]\w*)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?P<how>name|call)\s+(?:the\s+|your\s+)?(?:function|method)\s+(?P<tick>[`*]*)(?P<name>[A-Za-z_]\w*)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:function|method)\s+(?P<how>name)\s*(?:is|:|=)?\s*(?P<tick>[`*]*)(?P<name>[A-Za-z_]\w*)",
        re.IGNORECASE,
    ),
]
_NOT_NAMES = _words("""that which who whose to for in with of the a an and or named called returning taking accepting using
    python is should must will can could would here below above signature definition body from on it this
    so as by into we i you that's name names call calls returns takes computing""")
_NAME_FOLLOWERS = _words("that which to taking returning for with , : . ; ( who")
_ASK = _words("""write writing implement implementing create code complete finish make build need want provide add
    fix give rewrite""")
_KIND = _words("function method func def called named signature name")
_ASIDE = _words("""helper given have has already existing using use uses call calls calling from my like instead
    don't dont not without let program script prints print""")
_AS = frozenset({"as", "into"})
_SENTENCE_END = re.compile(r"(?:[.!?](?=\s)|\n\s*\n|[;\n])")
_DEFINED_AS = re.compile(r"\s*(?:is\s+defined|be\s+defined|be\b|denotes?\b|as\b|is\s+the\b)", re.IGNORECASE)


@dataclass(frozen=True)
class _Mention:
    score: int
    pos: int
    target: Target


def _prose_of(text: str) -> str:
    """``text`` with fenced code and ``$...$`` math blanked out (offsets kept)."""
    text = _FENCED.sub(lambda m: " " * len(m.group(0)), text)
    return _MATH.sub(lambda m: " " * len(m.group(0)), text)


def _ask_score(prose: str, pos: int, starts: list[int]) -> int:
    """How strongly the words just before ``pos`` (same sentence, last eight words) ask for what
    follows. The nearest request verb or aside decides: +2 for a request ("write", "implement"),
    -3 for an aside (a helper, something given, used, "my" existing code, a program); +1 for a
    "function"-like word, +1 for "as"/"into" right before (rewrite X *as* Y). ``starts``: where the
    sentences of ``prose`` start, in order."""
    start = max(starts[bisect.bisect_right(starts, pos) - 1], pos - _LOOK)
    words = [w for w in (w.strip("`*,:;()'\"").lower() for w in prose[start:pos].split()) if w][-8:]
    score = 0
    for k in range(len(words) - 1, -1, -1):
        w = words[k]
        if w in _ASK or (w == "define" and words[k + 1 : k + 2] in (["a"], ["an"])):  # not "define f(x) as"
            score += 2
            break
        if w in _ASIDE:
            score -= 3
            break
    if any(w in _KIND for w in words):
        score += 1
    if any(w in _AS for w in words[-3:]):
        score += 1
    return score


def _mentions(text: str) -> list[_Mention]:
    """Functions the prose names: backticked or plain signatures, ``def name(...)``, and names after
    "function", "named", "called"; each with how strongly the request asks for it."""
    prose = _prose_of(text)
    starts = [0, *(m.end() for m in _SENTENCE_END.finditer(prose))]
    found: list[_Mention] = []
    for m in itertools.islice(_PROSE_SIG.finditer(prose), MAX_MENTIONS):
        is_def, name, params = m.group(1), m.group(2), m.group(3)
        if not _usable(name):
            continue
        names = _signature_params(name, params)
        ticked = prose[max(0, m.start() - 1) : m.start()] == "`"
        score = _ask_score(prose, m.start(), starts) + (1 if is_def else 0)
        if not ticked and (
            names is None or score < (1 if is_def else 2) or _DEFINED_AS.match(prose, m.end())
        ):
            continue  # not asked for (plain-text math, "the values of function f(l, r)"), or defined as a formula
        # a backticked signature is code to start from (not a method's: it needs its class)
        ret = _return_annotation(prose[m.end() : m.end() + _LOOK])
        starter = (
            _signature_starter(name, params, ret)
            if ticked and names is not None and not _is_method(params)
            else ""
        )
        kind = "def" if is_def else "signature"
        found.append(_Mention(score, m.start(), Target(name, starter, names, kind)))
    for pattern in _NAMES:
        for m in itertools.islice(pattern.finditer(prose), MAX_MENTIONS):
            name = m.group("name")
            if not _usable(name) or name.lower() in _NOT_NAMES:
                continue
            after = prose[m.end() : m.end() + _LOOK].lstrip()
            if after.startswith("("):
                continue  # a signature: read above
            if not (m.group("how") or m.group("tick")):
                follower = after.split(maxsplit=1)[0].lower() if after else "."
                if not (_codey(name) or follower in _NAME_FOLLOWERS or follower[:1] in ",:.;"):
                    continue
            found.append(
                _Mention(_ask_score(prose, m.start(), starts) + 1, m.start(), Target(name, "", None, "named"))
            )
    return found


def _codey(name: str) -> bool:
    """A name no one would write as an ordinary word: snake_case, camelCase or with digits."""
    return "_" in name.strip("_") or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])


def _return_annotation(after: str) -> str | None:
    """The return annotation at the start of ``after`` (`` -> list[int]``), brackets balanced."""
    m = re.match(r"\s*->\s*", after)
    if not m:
        return None
    depth, i = 0, m.end()
    while i < len(after):
        c = after[i]
        if c in "[(":
            depth += 1
        elif c in "])":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c in " \t\n,;:`" or (c == "." and not after[i + 1 : i + 2].isalnum())):
            break
        i += 1
    return after[m.end() : i] or None


def _best(mentions: list[_Mention]) -> Target | None:
    """The mention asked for most strongly (the first among equals), with the parameters of another
    mention of the same name when it has none."""
    if not mentions:
        return None
    best = max(mentions, key=lambda m: (m.score, -m.pos))
    if best.target.params is None:
        same = [
            m for m in mentions if m.target.func_name == best.target.func_name and m.target.params is not None
        ]
        if same:
            return same[0].target
    return best.target


def find_target(text: str) -> Target:
    """The function ``text`` asks for, or ``Target(None)`` for a program reading standard input.

    A code block's unfinished function (a starter) wins; a finished one ("fix this", "make it faster")
    wins unless the prose asks for another function by name. Among the functions the prose names,
    the one asked for most strongly wins (see :func:`_ask_score`); the first among equals."""
    mentions = _mentions(text)
    prose = _best(mentions)
    for block in reversed(code_blocks(text)):
        found = _from_code(block)
        if found is None:
            continue
        target, starter, defined = found
        asked = [m for m in mentions if m.score >= 2 and m.target.func_name not in defined]
        if starter or not asked:
            return target
        return _best(asked) or target
    if prose is not None:
        return prose
    calls = example_calls(text)
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


def json_input(args: list[Any]) -> str | None:
    """Arguments as a functional test's input, one JSON value per line; None when one is not JSON."""
    lines = [_json(a) for a in args]
    return None if any(line is None for line in lines) else "\n".join(lines)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# Functional examples.


def _assert_line(line: str) -> str:
    """``assert f(1) == 2, "msg"`` → ``f(1) == 2``; other lines unchanged."""
    if not line.startswith("assert "):
        return line
    try:
        stmt = ast.parse(line).body[0]
    except (*_UNPARSABLE, IndexError):
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
    except _UNPARSABLE:
        return None
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    try:
        positional = [_value(a) for a in call.args]
        named = {k.arg: _value(k.value) for k in call.keywords if k.arg is not None}
    except (_NotLiteral, RecursionError):
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


_EXAMPLE_ARROW = re.compile(
    r"\s*(?:#\s*)?(?:==>|==|➞|→|->|=>|=|should\s+return\b|should\s+be\b|returns\b|gives\b|is\b|evaluates\s+to\b)\s*",
    re.IGNORECASE,
)
"""What joins an example call to its result; the arrow may sit in a comment (``f(15)  # returns "1111"``)."""
_FOR_EXAMPLE = re.compile(
    r"^for\s+(?P<args>.+?),?\s+the\s+(?:output|result|answer)\s+(?:should|will|would)\s+be\s*:?\s*(?P<out>.+)$",
    re.IGNORECASE,
)
"""``For lst = [1, 2] the output should be 3`` (arguments by name)."""
_WORKED = re.compile(r"^(?P<sum>[\d\s+\-*/().]+?)\s*=\s*(?P<value>-?[\d.]+)\s*[.,;]?\s*$")
"""A worked result, ``19 - 5 - 6 = 8``: the arithmetic, then its value."""
_QUOTES = "'\""
_VALUE_CHARS = 2000
"""Longest example call or value read from a line."""
_CUTS = 40
"""Places where a value may end that are tried (then the rest of the text as a whole)."""
MAX_INLINE = 100
"""Examples read from the lines of one request, at most."""


def _closing(line: str, open_at: int) -> int | None:
    """The index of the bracket closing the one at ``open_at`` (strings skipped; within
    ``_VALUE_CHARS``), or None."""
    depth, i, quote = 0, open_at, ""
    while i < min(len(line), open_at + _VALUE_CHARS):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in _QUOTES:
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


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
    except (*_UNPARSABLE, ValueError, OverflowError):
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


def _defined_by_formula(text: str, name: str, call: re.Pattern[str]) -> bool:
    """Whether ``text`` defines ``name`` by a formula (``tri(n) = 1 + n / 2``): its ``f(1) = 3`` lines
    are then values of the formula, not necessarily of the function asked for."""
    for raw in text.splitlines():
        line = raw.replace("`", "")
        for m in call.finditer(line):
            end = _closing(line, m.end() - 1)
            if end is None or not re.match(r"\s*=(?!=)", line[end + 1 : end + 20]):
                continue
            if _call_args(line[m.end() : end], None) is None:
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
    for raw in text.splitlines():
        line = raw.replace("`", "")
        if line.lstrip().startswith(">>>"):
            continue
        for m in call.finditer(line):
            end = _closing(line, m.end() - 1)
            if end is None:
                continue
            arrow = _EXAMPLE_ARROW.match(line, end + 1)
            if not arrow or (defined and arrow.group(0).strip() == "="):
                continue
            args = _call_args(line[m.end() : end], target.params)
            ok, expected = _first_value(line[arrow.end() : arrow.end() + _VALUE_CHARS])
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
    for line in _normalized_lines(text):
        m = _FOR_EXAMPLE.match(line)
        if not m:
            continue
        text_args = m["args"]
        ends = [len(text_args), *(i for i in range(len(text_args) - 1, 0, -1) if text_args[i] == ",")]
        args = next((a for e in ends if (a := _call_args(text_args[:e], params)) is not None), None)
        ok, expected = _first_value(m["out"])
        if args is not None and len(args) == len(params) and ok and _ASSIGN.match(text_args):
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

    for t in docstring_examples("\n".join(_normalized_lines(text)), name):
        add(t)
    found = [
        *_leetcode_examples(text, target.params),
        *_inline_examples(text, target),
        *_for_examples(text, target.params),
    ]
    for args, expected in found:
        given, output = json_input(args), _json(expected)
        if given is not None and output is not None:
            add(TestCase(kind="functional", input=given, output=output))
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


# ----------------------------------------------------------------------------------------------
# Calls written as code (test inputs a model wrote as Python instead of the asked-for format).


def _bindings(tree: ast.Module) -> dict[str, Any]:
    """Top-level ``name = literal`` assignments (the last one wins)."""
    out: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                out[stmt.targets[0].id] = _value(stmt.value)
            except (_NotLiteral, RecursionError):
                out.pop(stmt.targets[0].id, None)
    return out


_JS_DECLARATION = re.compile(r"^\s*(?:const|let|var)\s+")


def _js_line_as_python(line: str) -> str:
    """A line of JavaScript calls in Python's syntax where it has the same meaning: no ``//`` comment (one
    outside a string), no ``const``/``let``/``var``, no closing ``;`` (``console.log(f([1, 2], 'a'));``
    and ``const x = [1];`` then read as Python does)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote and line[i - 1] != "\\":
                quote = None
        elif c in "'\"`":
            quote = c
        elif line.startswith("//", i):
            line = line[:i]
            break
    return _JS_DECLARATION.sub("", line).rstrip().rstrip(";").rstrip()


def _parsed_pieces(code: str, *, javascript: bool = False) -> list[ast.Module]:
    """``code`` parsed whole, or else line by line (the lines that parse); JavaScript lines are read as
    Python first (:func:`_js_line_as_python`)."""
    if javascript:
        code = "\n".join(_js_line_as_python(line) for line in code.splitlines())
    try:
        return [ast.parse(code)]
    except _UNPARSABLE:
        pass
    pieces = []
    for line in code.splitlines()[: MAX_INLINE * 10]:
        try:
            pieces.append(ast.parse(line.strip()))
        except _UNPARSABLE:
            continue
    return pieces


def calls_in_code(
    text: str, name: str, *, limit: int = MAX_INLINE, language: str = "python"
) -> list[list[Any]]:
    """The literal arguments of every call of ``name`` in the code blocks of ``text`` (the whole text when
    it has none), in order: ``print(f(1, [2]))``, ``assert f("a") == 3``, ``x = [1]`` then ``f(x)``; in
    JavaScript also ``console.log(f([1, 2], 'a')); // 3`` and ``const x = [1];``. Calls with keywords,
    ``*args`` or arguments that are not literals are left out."""
    found: list[list[Any]] = []
    for block in code_blocks(text) or [text]:
        for tree in _parsed_pieces(block, javascript=language == "javascript"):
            bound = _bindings(tree)
            calls = sorted(
                (n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)
            )
            for node in calls:
                if not (isinstance(node.func, ast.Name) and node.func.id == name):
                    continue
                if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                    continue
                try:
                    args = [
                        bound[a.id] if isinstance(a, ast.Name) and a.id in bound else _value(a)
                        for a in node.args
                    ]
                except (_NotLiteral, RecursionError):
                    continue
                found.append(args)
                if len(found) >= limit:
                    return found
    return found
