"""A JavaScript function answer without the console calls a model adds after it.

Small models end a JavaScript function with example calls: ``console.log(rollingMax([1, 2]));  //
Output: [1, 2]``. HumanEval-X's rule fails a program that prints anything, so one such line fails a
right function; MultiPL-E stops its JavaScript completions at ``"\\nconsole.log"`` for the same reason.
:func:`drop_console_lines` removes them where a candidate's code is taken from the model's text
(:func:`memdoor.text.extract.candidate_code`, before anything runs it), so the program graded is the program
the user gets. It is the JavaScript side of :mod:`memdoor.text.clean`, narrower on purpose:

- only **top-level statements that are one console call** go (``console.log(...)``, ``.error``, ``.info``,
  ``.warn``, ``.debug``, ``.table``, ``.dir``, ``.assert``, ``.trace``), each starting its own line, with
  nothing after it on that line but ``;`` and a ``//`` comment;
- and only when its arguments are *harmless*: no assignment, ``++``/``--``, ``await``, ``yield`` or
  ``delete``; a bare call names the requested function, a function the answer defines, or a pure global
  (``String``, ``parseInt``, ...); no method call is a mutating one (``push``, ``sort``, ``assign``, ...).
- Comment lines directly above a dropped line (``// Example usage:``) go with it, and so do comment
  lines after the last remaining statement.

Calls inside functions, loops and blocks stay (a print there may be what the author meant), as does
a line a multi-line ``/* */`` comment touches, and anything this scanner cannot follow: the code is kept
unchanged when its strings, comments, template literals and brackets do not balance, or when nothing but
console lines would remain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONSOLE = frozenset({"log", "error", "info", "warn", "debug", "table", "dir", "assert", "trace"})
# fmt: off
_PURE_GLOBALS = frozenset({
    "String", "Number", "Boolean", "BigInt", "Array", "parseInt", "parseFloat", "isNaN", "isFinite",
    "Symbol", "Date", "RegExp", "Set", "Map",
})
_MUTATORS = frozenset({
    "push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill", "copyWithin", "set", "delete",
    "add", "clear", "assign", "defineProperty", "defineProperties", "setPrototypeOf", "freeze", "seal",
    "preventExtensions", "deleteProperty",
})
# fmt: on
_UNSAFE_WORDS = frozenset({"await", "yield", "delete", "import"})
_NOT_ASSIGN = frozenset({"==", "===", "!=", "!==", "<=", ">=", "=>"})
# After one of these a "/" starts a regular expression, not a division.
_REGEX_AFTER_WORDS = frozenset(
    {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "instanceof"}
    | {"yield", "await"}
)
# Tokens an expression may end with: a statement after one of them starts afresh (automatic semicolon
# insertion), after anything else (``=``, ``+``, ``,``, ``(``...) a line continues the statement above.
_ENDS_STATEMENT = frozenset({";", "}", ")", "]"})
_PUNCT = re.compile(
    r">>>=|\.\.\.|===|!==|\*\*=|<<=|>>=|>>>|\?\?=|&&=|\|\|=|=>|==|!=|<=|>=|&&|\|\||\?\?|\?\.|\+\+|--|"
    r"\+=|-=|\*=|/=|%=|&=|\|=|\^=|\*\*|<<|>>|[-+*/%&|^!~<>=?:;,.()\[\]{}]"
)
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"\d[\w.]*|\.\d[\w]*")
_DEFINED = re.compile(
    r"^(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)|^(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=",
    re.MULTILINE,
)


@dataclass
class _Tok:
    kind: str  # "word", "punct", "str" (a string, template, regex or number), "comment"
    text: str
    line: int  # 0-based line of its first character
    depth: int  # brackets open before it

    @property
    def lines(self) -> range:
        """The lines it touches (a template or a /* */ comment may span several)."""
        return range(self.line, self.line + self.text.count("\n") + 1)


class _Unfollowable(Exception):
    """The scanner lost track (an unclosed string, comment or bracket)."""


def _tokens(code: str) -> list[_Tok]:
    """The code's tokens, enough of JavaScript to follow strings, comments, templates, regular
    expressions and brackets."""
    out: list[_Tok] = []
    stack: list[str] = []  # open brackets; "`" marks a template's ${...}
    i, n, line = 0, len(code), 0

    def last() -> _Tok | None:
        for t in reversed(out):
            if t.kind != "comment":
                return t
        return None

    def depth() -> int:
        return len(stack)

    def template(start: int) -> int:
        """Scan template text from ``start`` (after ` or a closing } of ${...}); index after the closing `
        or after "${" (pushing a marker)."""
        j = start
        while j < n:
            c = code[j]
            if c == "\\":
                j += 2
                continue
            if c == "`":
                return j + 1
            if c == "$" and j + 1 < n and code[j + 1] == "{":
                stack.append("`")
                return j + 2
            j += 1
        raise _Unfollowable

    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c.isspace():
            i += 1
            continue
        start_line, d = line, depth()
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out.append(_Tok("comment", code[i:j], start_line, d))
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            if j < 0:
                raise _Unfollowable
            j += 2
            out.append(_Tok("comment", code[i:j], start_line, d))
        elif c in "'\"":
            j = i + 1
            while j < n and code[j] != c:
                if code[j] == "\n":
                    raise _Unfollowable
                j += 2 if code[j] == "\\" else 1
            if j >= n:
                raise _Unfollowable
            j += 1
            out.append(_Tok("str", code[i:j], start_line, d))
        elif c == "`":
            j = template(i + 1)
            out.append(_Tok("str", code[i:j], start_line, d))
        elif c == "}" and stack and stack[-1] == "`":
            stack.pop()
            j = template(i + 1)
            out.append(_Tok("str", code[i:j], start_line, depth()))
        elif c == "/" and _regex_may_start(last()):
            j, in_class = i + 1, False
            while j < n and (in_class or code[j] != "/"):
                if code[j] == "\n":
                    raise _Unfollowable
                if code[j] == "\\":
                    j += 1
                elif code[j] == "[":
                    in_class = True
                elif code[j] == "]":
                    in_class = False
                j += 1
            if j >= n:
                raise _Unfollowable
            j += 1
            while j < n and (code[j].isalnum()):
                j += 1
            out.append(_Tok("str", code[i:j], start_line, d))
        elif m := _WORD.match(code, i):
            j = m.end()
            out.append(_Tok("word", m.group(), start_line, d))
        elif m := _NUMBER.match(code, i):
            j = m.end()
            out.append(_Tok("str", m.group(), start_line, d))
        elif m := _PUNCT.match(code, i):
            j, p = m.end(), m.group()
            if p in "([{":
                stack.append(p)
            elif p in ")]}":
                if not stack or stack[-1] != {")": "(", "]": "[", "}": "{"}[p]:
                    raise _Unfollowable
                stack.pop()
            out.append(_Tok("punct", p, start_line, depth() if p in ")]}" else d))
        else:
            raise _Unfollowable  # a character JavaScript has no token for here (# or @)
        line += code.count("\n", i, j)
        i = j
    if stack:
        raise _Unfollowable
    return out


def _regex_may_start(prev: _Tok | None) -> bool:
    if prev is None:
        return True
    if prev.kind == "word":
        return prev.text in _REGEX_AFTER_WORDS
    if prev.kind == "punct":
        return prev.text not in {")", "]", "}", "++", "--"}
    return False


def _console_call(toks: list[_Tok], k: int) -> int | None:
    """When ``toks[k]`` starts a top-level ``console.x(...)`` statement: the index after it (its ``;``
    included); else None."""
    if not (
        k + 3 < len(toks)
        and toks[k].text == "console"
        and toks[k + 1].text == "."
        and toks[k + 2].text in _CONSOLE
        and toks[k + 3].text == "("
    ):
        return None
    j = k + 4
    while j < len(toks) and not (toks[j].text == ")" and toks[j].depth == 0):
        j += 1
    if j >= len(toks):
        return None
    j += 1
    if j < len(toks) and toks[j].text == ";":
        j += 1
    return j


def _starts_statement(toks: list[_Tok], k: int) -> bool:
    """Whether ``toks[k]`` opens a line and a statement of its own: the token before it ends an
    expression (so the line above does not continue into it) and is not the head of an ``if``, loop or
    ``else`` whose body the line would be."""
    if k == 0:
        return True
    prev = toks[k - 1]
    if prev.line == toks[k].line:
        return False
    if prev.kind == "word":
        return prev.text not in {"else", "do"} | _REGEX_AFTER_WORDS
    if prev.kind != "punct" or prev.text not in _ENDS_STATEMENT:
        return prev.kind == "str"
    if prev.text == ")":
        opener = next(j for j in range(k - 2, -1, -1) if toks[j].text == "(" and toks[j].depth == prev.depth)
        return opener == 0 or toks[opener - 1].text not in {"if", "for", "while", "with"}
    return True


def _harmless(args: list[_Tok], callable_names: set[str]) -> bool:
    for a, t in enumerate(args):
        if t.kind == "word" and t.text in _UNSAFE_WORDS:
            return False
        if t.kind == "punct" and (
            t.text in {"++", "--"} or (t.text.endswith("=") and t.text not in _NOT_ASSIGN)
        ):
            return False
        if t.kind == "word" and a + 1 < len(args) and args[a + 1].text == "(":
            after_dot = a > 0 and args[a - 1].text in {".", "?."}
            if after_dot and t.text in _MUTATORS:
                return False
            if not after_dot and t.text not in callable_names and t.text not in _PURE_GLOBALS:
                return False
    return True


def drop_console_lines(code: str, func_name: str) -> str:
    """``code`` without its top-level console lines (see the module's docstring); unchanged when none."""
    try:
        toks = _tokens(code)
    except (_Unfollowable, RecursionError):
        return code
    callable_names = {func_name} | {a or b for a, b in _DEFINED.findall(code)}
    code_toks = [t for t in toks if t.kind != "comment"]
    # Lines a multi-line /* */ comment touches: a line there is never dropped (half a comment would stay).
    spanned = {i for t in toks if t.kind == "comment" and len(t.lines) > 1 for i in t.lines}
    gone: set[int] = set()
    kept_code_lines: set[int] = set()
    k = 0
    while k < len(code_toks):
        t = code_toks[k]
        end = _console_call(code_toks, k) if t.depth == 0 and _starts_statement(code_toks, k) else None
        if end is not None:
            stmt = code_toks[k:end]
            after_on_line = end < len(code_toks) and code_toks[end].line == stmt[-1].line
            lines = set(range(t.line, stmt[-1].line + 1))
            if not after_on_line and not lines & spanned and _harmless(stmt[4:-1], callable_names):
                gone |= lines
                k = end
                continue
        kept_code_lines.update(t.lines)
        k += 1
    if not gone:
        return code
    if not kept_code_lines:
        return code  # nothing but console lines: kept for the author to see
    comment_only = (
        {t.line for t in toks if t.kind == "comment" and "\n" not in t.text} - kept_code_lines - gone
    )
    drop = set(gone)
    for g in sorted(gone):
        j = g - 1
        while j in comment_only:
            drop.add(j)
            j -= 1
    last_kept = max(kept_code_lines)
    drop.update(j for j in comment_only if j > last_kept)
    out = [x for i, x in enumerate(code.split("\n")) if i not in drop]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).rstrip() + ("\n" if code.endswith("\n") else "")
