"""A difference's input made smaller: simpler inputs derived from it, tried in a few bounded rounds.

Candidates (:func:`candidates`): each argument of a call made simpler in turn, the number of arguments
kept — an integer toward 0 (0, ±1, halved, a digit fewer, one step nearer, its sign dropped), a float
toward 0 or rounded, a string or bytes shortened (empty, either half, one character dropped), a list or
tuple shortened (empty, either half, one element alone, one element dropped) and its elements made simpler,
a dict's entries dropped (all, all but one, one) and its values made simpler, a set's elements dropped, True
to False; None stays; the arguments are taken in turn, so the cap on candidates made (:data:`MAX_MADE`)
leaves none out. A standard-input program's input loses lines as a list loses elements. Only inputs
smaller than the one they come from (:func:`size`: the length of the input's text — a Python literal, or
JSON for JavaScript and Rust — then the text) are candidates, the smallest first; an input longer than the
stage's own may be has none.

:func:`shrink` runs them, one batch per round for every difference at once (the caller's ``run``: both
versions on a list of inputs, as the stage runs its own), and keeps, per difference, the smallest candidate
that still shows it (its ``shows``: the caller's rule, the same difference with the same types). An input's
candidates are made once, off the event loop. At most :data:`ROUNDS` rounds, and at most :data:`MAX_RUNS`
inputs run per function, the re-runs included: the smallest input found runs ``again`` times more (the
stage: as often as an original difference it doubts), and replaces the original only if both versions give
the same outcomes every time. A sandbox that fails, or a shrunk input that does not reproduce, leaves the
original: shrinking never loses a difference.

Every language's functions and programs shrink. A Rust program runs its candidates as its own inputs: the
same wrapped program, each candidate its standard input (the sandbox builds it once per run, so once a round
per version, as for the stage's own re-runs). A Rust function's harness has its inputs compiled in, so its
candidates are only those its parameter types take as literals (the caller's ``fits``:
:func:`.rust_inputs.takes`), and each round, the re-runs too, runs in one harness of that round's inputs per
version (the caller's ``run``: :attr:`.targets.Batch.rebuild`); a round whose inputs cannot run
(:class:`RoundFailed`: that harness did not compile) leaves every original, as a sandbox that fails does.
"""

from __future__ import annotations

import ast
import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from memdoor.core.errors import SandboxError
from memdoor.review.differential.driver import CallOutcome
from memdoor.review.differential.inputs import LITERAL_ERRORS, MAX_CALL_CHARS, Call, make_call
from memdoor.review.differential.json_inputs import MAX_CALL_CHARS as MAX_JSON_CALL_CHARS
from memdoor.review.differential.json_inputs import json_call
from memdoor.review.differential.stdin_inputs import MAX_STDIN_CHARS, stdin_call, stdin_of

ROUNDS = 3
"""Rounds of candidates at most (each one batch on both versions)."""
MAX_RUNS = 64
"""Inputs run per function at most while shrinking its differences: the candidates, and each shrunk
input's second run."""
MAX_POSITIONS = 16
"""Elements (characters, lines, entries) of one value dropped or made simpler, one at a time, at most."""
MAX_DEPTH = 8
"""Nesting into which values are made simpler."""
MAX_MADE = 400
"""Candidates made from one input at most (before the smallest are chosen)."""


class RoundFailed(Exception):
    """A round whose inputs could not run (the caller's: a Rust harness of its candidates that does not
    compile): every original stays."""


def size(call: Call) -> tuple[int, str]:
    """An input's size: its text's length, then its text."""
    return len(call.text), call.text


# ---------------------------------------------------------------- simpler values
def _ints(n: int) -> list[int]:
    if n == 0:
        return []
    sign, a = (1 if n > 0 else -1), abs(n)
    return [0, sign, sign * (a // 2), sign * (a // 10), sign * (a - 1), a]


def _floats(x: float) -> list[float]:
    if x == 0 or not math.isfinite(x):
        return []
    sign = 1.0 if x > 0 else -1.0
    out = [0.0, sign, float(math.trunc(x)), x / 2, abs(x)]
    if abs(x) < 1e15:
        out.append(round(x, 1))
    return out


def _positions(n: int) -> range:
    return range(min(n, MAX_POSITIONS))


def _shorter(items: list[Any]) -> list[list[Any]]:
    """Empty, either half, each one of the first elements alone, each one dropped."""
    half = len(items) // 2
    out = [[], items[:half], items[half:]] if items else []
    out += [[items[i]] for i in _positions(len(items))]
    return out + [items[:i] + items[i + 1 :] for i in _positions(len(items))]


def _texts(s: str | bytes) -> list[Any]:
    half = len(s) // 2
    out = [s[:0], s[:half], s[half:]] if s else []
    return out + [s[:i] + s[i + 1 :] for i in _positions(len(s))]


def _sequence(items: list[Any], depth: int) -> list[list[Any]]:
    out = _shorter(items)
    for i in _positions(len(items)):
        out += [[*items[:i], v, *items[i + 1 :]] for v in simpler(items[i], depth + 1)]
    return out


def _mapping(d: dict[Any, Any], depth: int) -> list[dict[Any, Any]]:
    keys = list(d)
    out: list[dict[Any, Any]] = [{}] if d else []
    out += [{k: d[k]} for k in keys[:MAX_POSITIONS]]
    out += [{k: d[k] for k in keys if k != drop} for drop in keys[:MAX_POSITIONS]]
    for k in keys[:MAX_POSITIONS]:
        out += [{**d, k: v} for v in simpler(d[k], depth + 1)]
    return out


def simpler(value: Any, depth: int = 0) -> list[Any]:
    """Values simpler than ``value`` (of its type; none for None, False, 0 or an empty value)."""
    if depth > MAX_DEPTH or value is None:
        return []
    if isinstance(value, bool):
        return [False] if value else []
    if isinstance(value, int):
        return _ints(value)
    if isinstance(value, float):
        return _floats(value)
    if isinstance(value, str | bytes):
        return _texts(value)
    if isinstance(value, list):
        return _sequence(value, depth)
    if isinstance(value, tuple):
        return [tuple(v) for v in _sequence(list(value), depth)]
    if isinstance(value, dict):
        return _mapping(value, depth)
    if isinstance(value, set | frozenset):
        return [type(value)(v) for v in _shorter(sorted(value, key=repr))]
    return []


def simpler_arguments(args: list[Any]) -> Iterator[list[Any]]:
    """Argument lists with one argument made simpler (as many arguments), the arguments taken in turn (each
    one's first simpler value, then each one's second, ...): a cap on how many are made leaves no argument
    out."""
    values = [simpler(a) for a in args]
    for k in range(max(map(len, values), default=0)):
        for i, vs in enumerate(values):
            if k < len(vs):
                yield [*args[:i], vs[k], *args[i + 1 :]]


def simpler_stdin(text: str) -> list[str]:
    """Standard inputs with fewer lines: none, either half, one line alone, one line dropped."""
    return ["".join(lines) for lines in _shorter(text.splitlines(keepends=True))]


# ---------------------------------------------------------------- candidate inputs
def _read(call: Call, language: str) -> list[Any] | None:
    try:
        value = ast.literal_eval(call.text) if language == "python" else json.loads(call.text)
    except (*LITERAL_ERRORS, json.JSONDecodeError):
        return None
    return value if isinstance(value, list) else None


def _made(call: Call, language: str, program: bool) -> Iterable[Call | None]:
    if program:
        return (stdin_call(t, call.source, call.agent) for t in simpler_stdin(stdin_of(call)))
    make = make_call if language == "python" else json_call
    made = islice(simpler_arguments(_read(call, language) or []), MAX_MADE)
    return (make(a, call.source, call.agent) for a in made)


def _too_big(call: Call, language: str, program: bool) -> bool:
    """Whether ``call`` is longer than the stage's own inputs may be (:data:`.inputs.MAX_CALL_CHARS`, its
    JSON twin, :data:`.stdin_inputs.MAX_STDIN_CHARS` of standard input): none of its inputs is, and making
    candidates of a larger one would take seconds."""
    if not program:
        return len(call.text) > (MAX_CALL_CHARS if language == "python" else MAX_JSON_CALL_CHARS)
    # a text's repr is at most 10 characters per character (``\U0010ffff``), and the list's four
    return len(call.text) > 10 * MAX_STDIN_CHARS + 4 or len(stdin_of(call)) > MAX_STDIN_CHARS


def candidates(
    call: Call, language: str, program: bool = False, fits: Callable[[Call], bool] | None = None
) -> list[Call]:
    """The inputs simpler than ``call`` (``language``'s argument list — a Python literal, JSON otherwise —
    or a program's standard input) and smaller than it, distinct, the smallest first, only those ``fits``
    takes when given (a Rust function's: its parameter types); none for an input longer than the stage's
    own may be."""
    if _too_big(call, language, program):
        return []
    found: dict[str, Call] = {}
    for c in _made(call, language, program):
        if c is not None and size(c) < size(call) and c.text not in found and (fits is None or fits(c)):
            found[c.text] = c
    return sorted(found.values(), key=size)


# ---------------------------------------------------------------- the rounds
Outcomes = tuple[list[CallOutcome], list[CallOutcome]]
RunCalls = Callable[[list[tuple[int, Call]]], Awaitable[Outcomes]]
"""Runs inputs (each with its goal's index) on both versions, in one batch: each one's outcome on each."""


@dataclass(frozen=True)
class Goal:
    """One difference to shrink: its input, the function whose budget it shares (``family``), the
    candidates of an input, and whether a run (old, new) still shows the difference."""

    call: Call
    family: int
    candidates: Callable[[Call], list[Call]]
    shows: Callable[[CallOutcome, CallOutcome], bool]


@dataclass(frozen=True)
class Shrunk:
    """A smaller input that showed the difference twice, and its outcomes."""

    call: Call
    old: CallOutcome
    new: CallOutcome


def _shares(goals: list[Goal], active: list[int], left: dict[int, int], rounds_left: int) -> dict[int, int]:
    """How many candidates each active goal runs this round: its function's runs left spread over the
    rounds left, split between its active goals."""
    out: dict[int, int] = {}
    for family in {goals[i].family for i in active}:
        members, runs = [i for i in active if goals[i].family == family], max(left[family], 0)
        share = max(runs // rounds_left, min(runs, len(members)))
        for k, i in enumerate(members):
            out[i] = share // len(members) + (k < share % len(members))
    return out


def _candidates_of(goals: list[Goal], current: list[Call], which: list[int]) -> list[list[Call]]:
    """The candidates of the goals ``which``'s current inputs."""
    return [goals[i].candidates(current[i]) for i in which]


async def shrink(
    goals: list[Goal], run: RunCalls, rounds: int = ROUNDS, max_runs: int = MAX_RUNS, again: int = 1
) -> list[Shrunk | None]:
    """Each goal's smallest input that shows its difference and gives both outcomes again on each of
    ``again`` more runs, or None (its input stays). An input's candidates are made once (in a thread: they
    can take a good part of a second), and the next of them tried in the next round while none is smaller."""
    found: list[Shrunk | None] = [None] * len(goals)
    current = [g.call for g in goals]
    tried = [{g.call.text} for g in goals]
    made: dict[int, list[Call]] = {}
    left = {g.family: max_runs for g in goals}
    active = list(range(len(goals)))
    for r in range(rounds):
        if stale := [i for i in active if i not in made]:
            made.update(
                zip(stale, await asyncio.to_thread(_candidates_of, goals, current, stale), strict=True)
            )
        if r == 0:
            active = [i for i in active if made[i]]
            for i in active:
                left[goals[i].family] -= again  # its re-runs, kept aside
        shares = _shares(goals, active, left, rounds - r)
        batch: list[tuple[int, Call]] = []
        for i in active:
            fresh = [c for c in made[i] if c.text not in tried[i]][: shares[i]]
            tried[i].update(c.text for c in fresh)
            left[goals[i].family] -= len(fresh)
            batch += [(i, c) for c in fresh]
        if not batch:
            break
        try:
            old, new = await run(batch)
        except (SandboxError, RoundFailed):
            return [None] * len(goals)
        stalled = set()
        for (i, c), o, n in zip(batch, old, new, strict=True):
            if "timeout" in (o.kind, n.kind):
                stalled.add(i)  # a candidate that runs out of time: no more rounds for this difference
            if goals[i].shows(o, n) and size(c) < size(current[i]):
                current[i], found[i] = c, Shrunk(c, o, n)
                made.pop(i, None)
        active = [i for i in dict.fromkeys(i for i, _ in batch) if i not in stalled]
    return await _again(found, run, again)


async def _again(found: list[Shrunk | None], run: RunCalls, again: int) -> list[Shrunk | None]:
    """The shrunk inputs that give both versions' outcomes again on each of ``again`` more runs (the
    others: None)."""
    redo = [(i, s.call) for i, s in enumerate(found) if s is not None for _ in range(again)]
    if not redo:
        return found
    try:
        old, new = await run(redo)
    except (SandboxError, RoundFailed):
        return [None] * len(found)
    out = list(found)
    for (i, _), o, n in zip(redo, old, new, strict=True):
        s = found[i]
        if s is None or o.key() != s.old.key() or n.key() != s.new.key():
            out[i] = None
    return out
