"""Call inputs for a changed function: our own (no model needed): the calls of it found in the base
(:mod:`.examples`) and their variations (:mod:`.variations`) first, then inputs from its signature and the
literals of its changed lines; and the agents', read as Python literals only.

An input is a list of positional arguments, kept as its ``repr`` (:class:`Call`), which the sandbox
program reads back with ``ast.literal_eval``: only values a literal can write (numbers, strings, bytes,
booleans, None, and lists, tuples, dicts and sets of them) ever reach it. An agent answers with a JSON
list of argument lists, each argument the text of a Python literal (``[["[1, 2]", "0"], ["[]", "-1"]]``);
its JSON values, a Python literal list, or ``f(...)`` call lines with literal arguments are read too.
Every argument text goes through ``ast.literal_eval`` and nothing else: ``__import__('os').system(...)``
is not a literal and is rejected. Count, size and nesting are capped.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from itertools import zip_longest
from typing import Any, Literal

from pydantic import BaseModel, Field

from memdoor.review.differential.functions import ChangedFunction, Param
from memdoor.review.differential.variations import varied_calls
from memdoor.text.answer_blocks import candidates, outer_span

MAX_CALL_CHARS = 1000
"""Longest input (the repr of its argument list)."""
MAX_ARGUMENT_CHARS = 1000
"""Longest argument text an agent may write (before ``literal_eval``)."""
MAX_ANSWER_CHARS = 50_000
"""Longest answer text read for inputs."""
MAX_OWN_INPUTS = 24
"""Our own inputs from the signature per function at most."""
MAX_MINED = 16
"""Calls found in the base (:mod:`.examples`) used per function at most."""
MAX_VARIED_INPUTS = 40
"""Our own inputs varied from the calls found in the base, per function at most."""
MAX_ARGUMENTS = 16

LITERAL_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)
"""What reading a literal (``ast.literal_eval``) or parsing a line of code may raise on hostile text."""


class Call(BaseModel):
    """One input: the repr of its positional argument list, and who wrote it."""

    text: str = Field(description="repr of the argument list (a Python literal).")
    source: Literal["own", "agent"] = "own"
    agent: str | None = None

    @property
    def arguments(self) -> str:
        """The arguments as they appear in the call's parentheses."""
        return self.text[1:-1]


def make_call(
    args: list[Any], source: Literal["own", "agent"] = "own", agent: str | None = None
) -> Call | None:
    """The input for ``args`` when it is a literal that reads back (``literal_eval(repr)``) within the cap."""
    if len(args) > MAX_ARGUMENTS:
        return None
    try:
        text = repr(list(args))
        if len(text) > MAX_CALL_CHARS:
            return None
        ast.literal_eval(text)
    except (*LITERAL_ERRORS, OverflowError):  # a huge int's repr, a nan/inf that does not read back
        return None
    return Call(text=text, source=source, agent=agent)


def literal(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is a Python literal within the size cap; ``(False, None)`` else."""
    if len(text) > MAX_ARGUMENT_CHARS:
        return False, None
    try:
        return True, ast.literal_eval(text.strip())
    except LITERAL_ERRORS:
        return False, None


# ---------------------------------------------------------------- our own inputs
_INT = [0, 1, -1, 2, 10, 100]
_FLOAT = [0.0, 1.0, -1.5, 0.5, 1e9]
_STR = ["", "a", "abc", "Hello World", " ", "0"]
_LIST = [[], [1], [1, 2, 3], [3, -1, 2, 0], [0, 0], [2, 2, 1]]
_STR_LIST = [[], ["a"], ["a", "b", "c"], [""], ["b", "a", "b"]]
_DICT = [{}, {"a": 1}, {"a": 1, "b": 2}]
_ANY = [1, 0, -1, 2, 10, 0.5, "", "abc", [], [1, 2, 3], [3, -1, 2, 0], (), {}, None, True]


def _pool(annotation: str | None) -> list[Any]:
    """Values of the type an annotation names (its text), or a mix of everything."""
    a = (annotation or "").replace("typing.", "").replace(" ", "")
    low = a.lower()
    optional = "none" in low or low.startswith("optional")
    core = re.sub(r"^optional\[(.*)\]$", r"\1", low)
    pool: list[Any]
    if core.startswith(("list[str]", "sequence[str]", "iterable[str]")):
        pool = list(_STR_LIST)
    elif core.startswith(("list", "sequence", "iterable", "collection")):
        pool = list(_LIST)
    elif core.startswith(("dict", "mapping")):
        pool = list(_DICT)
    elif core.startswith("tuple"):
        pool = [(), (1, 2), (0, -1, 5)]
    elif core.startswith(("set", "frozenset")):
        pool = [set(), {1, 2}, {0, -1, 5}]
    elif core.startswith("bool"):
        pool = [True, False]
    elif core.startswith("int"):
        pool = list(_INT)
    elif core.startswith("float"):
        pool = [*_FLOAT, 0, 3]
    elif core.startswith("str"):
        pool = list(_STR)
    else:
        pool = list(_ANY)
    return pool + ([None] if optional else [])


def _fits(value: Any, pool: list[Any]) -> bool:
    """Whether ``value`` is of a type the pool holds (a mixed pool takes anything)."""
    types = {type(v) for v in pool if v is not None}
    mixed = len(types) > 3
    return mixed or type(value) in types or (isinstance(value, int | float) and bool(types & {int, float}))


def _near(value: Any) -> list[Any]:
    """A literal of a changed line and its neighbours (boundaries: k - 1, k, k + 1)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**9:
        return [value, value - 1, value + 1]
    if isinstance(value, float):
        return [value, value - 1, value + 1]
    return [value]


def values_for(param: Param, literals: list[Any]) -> list[Any]:
    """Values to try for ``param``: its default, the changed lines' literals and their neighbours (as
    they are, or inside a list for a list parameter), then values of its annotated type."""
    pool = _pool(param.annotation)
    first: list[Any] = []
    if param.default is not None:
        ok, value = literal(param.default)
        if ok:
            first.append(value)
    listy = bool(pool) and all(isinstance(v, list) for v in pool)
    for k in literals:
        for v in _near(k):
            if listy:
                first += [[v], [v, v], [0, v]] if not isinstance(v, str) else [[v]]
            elif _fits(v, pool):
                first.append(v)
    out: list[Any] = []
    for v in first + pool:
        if not any(type(v) is type(w) and v == w for w in out):
            out.append(v)
    return out


def own_inputs(
    fn: ChangedFunction, limit: int = MAX_OWN_INPUTS, mined: Sequence[list[Any]] = ()
) -> list[Call]:
    """Inputs of our own, no model asked: the ``mined`` calls first (real usage found in the base, see
    :mod:`.examples`), then their variations (at most :data:`MAX_VARIED_INPUTS`, see :mod:`.variations`)
    taken in turn with up to ``limit`` inputs from the signature (:func:`signature_inputs`), so that a cap
    on the whole keeps some of each."""
    if any(p.required for p in fn.params if p.kind == "keyword_only"):
        return []  # a required keyword-only argument: positional inputs cannot call it
    seen: set[str] = set()
    first = _distinct(mined, MAX_MINED, seen)
    varied = _distinct(varied_calls(list(mined), fn.literals), MAX_VARIED_INPUTS, seen)
    signature = _distinct(signature_inputs(fn), limit, seen)
    turns = [c for pair in zip_longest(varied, signature) for c in pair if c is not None]
    return first + turns


def _distinct(calls: Sequence[list[Any]], limit: int, seen: set[str]) -> list[Call]:
    """The calls that make an input within the caps and are not in ``seen``, at most ``limit``."""
    out: list[Call] = []
    for args in calls:
        if len(out) >= limit:
            break
        call = make_call(args)
        if call is not None and call.text not in seen:
            seen.add(call.text)
            out.append(call)
    return out


def signature_inputs(fn: ChangedFunction) -> list[list[Any]]:
    """Argument lists from the signature: each positional parameter varied in turn over
    :func:`values_for` while the others keep their first value; the required parameters alone first."""
    positional = [p for p in fn.params if p.kind == "positional"]
    required = sum(p.required for p in positional)
    pools = [values_for(p, fn.literals) for p in positional]
    base = [pool[0] if pool else None for pool in pools]
    rounds: list[list[Any]] = [base[:required]]
    depth = max((len(p) for p in pools), default=0)
    for k in range(1, depth):  # round robin over the parameters, so each gets its turn within the cap
        for i, pool in enumerate(pools):
            if k < len(pool):
                args = base[: max(required, i + 1)]
                args[i] = pool[k]
                rounds.append(args)
    if required < len(positional):
        rounds.append(list(base))
    return rounds


# ---------------------------------------------------------------- the agents' inputs
class Read(BaseModel):
    """What was read from one answer."""

    calls: list[Call] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list, description="Why inputs were refused.")
    unreadable: bool = Field(default=False, description="No list of inputs was found in the answer.")


def _structure(block: str) -> tuple[list[Any], bool] | None:
    """The list an answer block holds, and whether it was JSON (its strings are then literal texts)."""
    try:
        data, is_json = json.loads(block), True
    except (ValueError, RecursionError):
        ok, data = literal(block) if len(block) <= MAX_ANSWER_CHARS // 5 else (False, None)
        if not ok:
            return None
        is_json = False
    if isinstance(data, dict):
        data = next((data[k] for k in ("inputs", "calls", "tests") if isinstance(data.get(k), list)), None)
    if not isinstance(data, list | tuple) or not any(isinstance(x, list | tuple) for x in data):
        return None  # not a list of argument lists
    return list(data), is_json


def _call_line(line: str, name: str) -> tuple[bool, list[Any] | None]:
    """``(True, args)`` for ``name(literal, ...)``; ``(True, None)`` for a call of ``name`` with anything
    else in it (rejected); ``(False, None)`` for a line that is no call of ``name``."""
    short = name.rsplit(".", 1)[-1]
    stripped = line.strip().removeprefix(">>>").strip()
    if not re.match(rf"(?:[A-Za-z_][\w.]*\.)?{re.escape(short)}\s*\(", stripped):
        return False, None
    if len(stripped) > MAX_CALL_CHARS * 2:
        return True, None
    try:
        node = ast.parse(stripped, mode="eval").body
    except LITERAL_ERRORS:
        return True, None
    if not isinstance(node, ast.Call) or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return True, None
    try:
        return True, [ast.literal_eval(a) for a in node.args]
    except LITERAL_ERRORS:
        return True, None


def _arguments(item: Any, is_json: bool) -> tuple[list[Any] | None, str]:
    """One input's arguments, or None and why it is refused."""
    if not isinstance(item, list | tuple):
        return None, "an input that is not a list of arguments"
    args = []
    for a in item:
        if is_json and isinstance(a, str):
            ok, value = literal(a)
            if not ok:
                return None, f"an argument that is not a Python literal: {a[:60]!r}"
            args.append(value)
        else:
            args.append(a)
    return args, ""


def read_inputs(text: str, fn_name: str, agent: str, limit: int) -> Read:
    """The inputs of one agent's answer (see the module), at most ``limit`` (the count the agent was asked for)."""
    read = Read()
    text = text[:MAX_ANSWER_CHARS]
    found = next((f for f in map(_structure, candidates(text, spans=())) if f is not None), None)
    items: list[tuple[list[Any] | None, str]] = []
    if found is None:
        for line in text.splitlines():
            is_call, args = _call_line(line, fn_name)
            if is_call:
                items.append((args, "" if args is not None else "a call whose arguments are not literals"))
    if not items and found is None:
        span = outer_span(text, "[]")
        found = _structure(span) if span is not None else None
        if found is None:
            read.unreadable = True
            return read
    if found is not None:
        items = [_arguments(item, found[1]) for item in found[0]]
    seen: set[str] = set()
    for args, why in items:
        if len(read.calls) >= limit:
            read.rejected.append(f"inputs over the limit of {limit}")
            break
        if args is None:
            read.rejected.append(why)
            continue
        call = make_call(args, "agent", agent)
        if call is None:
            read.rejected.append("an input too large or that does not read back as a literal")
        elif call.text not in seen:
            seen.add(call.text)
            read.calls.append(call)
    return read
