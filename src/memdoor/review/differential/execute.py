"""Both versions run on the same inputs in the sandbox; a difference counts when it reproduces.

A :class:`~memdoor.review.differential.targets.Batch` is one program per version (the Python driver, the
Node driver, a wrapped Rust program: :mod:`.plan`) run on every input of its targets, the base and the
changed code at once, through a :class:`~memdoor.core.protocols.CodeRunner` (the review's judge: the
candidates' sandbox and limits, within the run's sandbox slots); each test's input starts with the batch's
nonce, and only the result lines that carry it are read (:mod:`.seal`). Python's calls run with a fixed string
hash seed (:mod:`.driver`), so a set of strings prints the same on both versions. The inputs whose outcomes
differ run again on both; a difference is **reproduced** when each version agrees with itself (the second
run gives the same two outcomes as the first: a function with random or timing-dependent output does not).
Per function, the differences are grouped by what changed (the old and the new outcome's kind, an
exception's type, how a program ended, the returned values' types when both return); a version that gave
another value of the same kind on its second run shows the group's output may be **nondeterministic** (a
Rust ``HashMap``'s order, a coin toss, a random token), so the group's inputs that agreed with themselves
run :data:`RECHECKS` times more: one counts only when every run gives both its outcomes again (a
deterministic difference beside one random input is kept; a coin toss that agreed with itself by chance is
not). The smallest input of each group (shortest argument text) is kept,
then made smaller still (:mod:`.shrink`: simpler inputs derived from it, run in a few bounded batches; one
that shows the same difference — the same parts differ, with the same kinds and types — and gives both its
outcomes again on 1 + :data:`RECHECKS` more runs takes its place), unless its group showed the output
nondeterministic or a version ran out of time or memory on it.
A call that cannot run on a version (an ``import`` outcome: its module does not load, or it imports one the
sandbox lacks; an ImportError it raises itself is an exception like any other) shows no behaviour there and
is no difference; a target none of whose calls ran on both versions gets a note saying why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal

from pydantic import BaseModel, Field

from memdoor.core.errors import SandboxError
from memdoor.core.problem import Problem, TestCase
from memdoor.core.protocols import CodeRunner
from memdoor.core.verdict import TestResult, Verdict
from memdoor.review.differential.driver import CallOutcome
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.rust_inputs import takes
from memdoor.review.differential.seal import new_nonce, sealed
from memdoor.review.differential.shrink import Goal, RoundFailed, candidates, shrink, size
from memdoor.review.differential.targets import Batch, Changed, Target, kind_of, language_of

MAX_DIFFERENCES = 3
"""Distinct differences kept per function (the smallest input of each)."""
RECHECKS = 6
"""More runs of an input whose difference reproduced in a group another input showed nondeterministic (a
coin toss on both versions agrees with itself on all of them once in 4,096)."""
MAX_RECHECKED = 8
"""Inputs of one such group run again at most (the smallest); its others do not count."""
PROBLEMS = {
    language: Problem(
        id="review-differential", statement="The review's differential execution.", language=language
    )
    for language in ("python", "javascript", "rust")
}


class Difference(BaseModel):
    """One input on which the base and the changed code behave differently."""

    function: str = Field(description="The function, or the program's path.")
    target: Literal["function", "program"] = "function"
    language: Literal["python", "javascript", "rust"] = "python"
    file: str
    line: int
    end_line: int
    input: Call
    old: CallOutcome
    new: CallOutcome
    reproduced: bool = True
    nondeterministic: bool = Field(
        default=False,
        description="A version gave another value of the same kind when run again, on this input, or on "
        "another of its kind while this one did not give its outcomes again on every later run: the output "
        "is not a function of the input.",
    )
    verdict: str = Field(
        default="unjudged",
        description="intended, unintended, unclear, or behaviour changed (no description).",
    )
    votes: dict[str, str] = Field(default_factory=dict, description="Each agent's answer, when asked.")

    def call_text(self) -> str:
        if self.target == "program":
            return f"{self.function} on standard input {self.input.arguments}"
        return f"{self.function}({self.input.arguments})"


class Ran(BaseModel):
    """What running one function's inputs gave."""

    inputs: int = 0
    differing: int = Field(default=0, description="Inputs whose outcomes differed on the first run.")
    reproduced: int = 0
    differences: list[Difference] = Field(default_factory=list, description="Kept (smallest per group).")
    not_reproduced: list[Difference] = Field(default_factory=list)
    note: str | None = Field(default=None, description="Why the runs show nothing, when they cannot.")


Reader = Callable[[TestResult, str], CallOutcome]
"""Reads a test's result given the nonce its input carried (:mod:`.seal`)."""
Outcomes = tuple[list[CallOutcome], list[CallOutcome]]
"""Each test's outcome on the base and on the change."""


async def run_version(
    runner: CodeRunner, code: str, tests: Sequence[TestCase], read: Reader, language: str = "python",
    nonce: str | None = None,
) -> list[CallOutcome]:  # fmt: skip
    """Outcomes of ``code`` (one version's program) on ``tests``, in order, each test's input after the line
    of ``nonce`` (a fresh one when None): only the result lines that carry it are read."""
    if not tests:
        return []
    nonce = nonce or new_nonce()
    verdict: Verdict = await runner.run_tests(
        PROBLEMS[language], code, [sealed(t, nonce) for t in tests], stop_at_first_failure=False
    )
    results = list(verdict.tests) + [None] * (len(tests) - len(verdict.tests))
    return [read(r, nonce) if r is not None else CallOutcome(kind="crash", text="not run") for r in results]


async def run_both(
    runner: CodeRunner, batch: Batch, tests: Sequence[TestCase]
) -> tuple[list[CallOutcome], list[CallOutcome]]:
    old, new = await asyncio.gather(
        run_version(runner, batch.old_code, tests, batch.read, batch.language, batch.nonce),
        run_version(runner, batch.new_code, tests, batch.read, batch.language, batch.nonce),
    )
    return old, new


def _compared(o: CallOutcome, n: CallOutcome) -> bool:
    """Whether a call ran on both versions: one that cannot run on a version (a module the sandbox lacks,
    an input its type cannot take) shows no behaviour there, so it is no difference."""
    return o.kind != "import" and n.kind != "import"


def _note(old: list[CallOutcome], new: list[CallOutcome], program: bool = False) -> str | None:
    """Why no call ran on both versions (the function cannot run in the sandbox on one or on either)."""
    if not old or any(_compared(o, n) for o, n in zip(old, new, strict=True)):
        return None
    base, change = all(o.kind == "import" for o in old), all(n.kind == "import" for n in new)
    where = {(True, True): "either version", (True, False): "the base", (False, True): "the change"}.get(
        (base, change), "one version or the other"
    )
    first = next(o for pair in zip(old, new, strict=True) for o in pair if o.kind == "import")
    verb = "run" if program else "be called"
    return f"it cannot {verb} in the sandbox on {where}: {first.type}: {first.text}"[:300]


def _kinds(old: CallOutcome, new: CallOutcome) -> tuple[str, str, str, str]:
    """What kind of difference two outcomes make: each one's kind, with the exception's type, how a program
    ended, and, when both versions return values of different types, those types. Returning 2 instead of 3
    and 5.0 instead of 7.0 is one difference (the type kept), returning None instead of 0 another (a
    description may ask for one and not the other); raising instead of returning 2 or "b" is one."""
    retyped = old.kind == new.kind == "return" and old.type != new.type

    def side(o: CallOutcome) -> tuple[str, str]:
        return o.kind, o.type if retyped or o.kind in ("raise", "import", "exit") else ""

    return (*side(old), *side(new))


def _group(d: Difference) -> tuple[str, str, str, str]:
    """What kind of difference ``d`` is (:func:`_kinds`)."""
    return _kinds(d.old, d.new)


def _size(d: Difference) -> tuple[int, str]:
    """An input's size: its text's length, then its text."""
    return size(d.input)


def smallest(differences: list[Difference], limit: int = MAX_DIFFERENCES) -> list[Difference]:
    """The smallest input (shortest text, then text) of each group of differences, smallest first."""
    best: dict[tuple[str, str, str, str], Difference] = {}
    for d in differences:
        g = _group(d)
        if g not in best or _size(d) < _size(best[g]):
            best[g] = d
    return sorted(best.values(), key=_size)[:limit]


def _wavers(first: CallOutcome, again: CallOutcome) -> bool:
    """Whether a version's second run gave another value of the same kind (not a timeout or a crash)."""
    return (first.kind, first.type) == (again.kind, again.type) and first.key() != again.key()


def _doubtful(found: list[tuple[int, Difference]]) -> list[int]:
    """The inputs (by test) whose difference reproduced in a group another input showed nondeterministic,
    the :data:`MAX_RECHECKED` smallest of each group: they count only if they hold when run again."""
    wavering = {_group(d) for _, d in found if d.nondeterministic}
    by: dict[tuple[str, str, str, str], list[tuple[int, Difference]]] = {}
    for i, d in found:
        if d.reproduced and _group(d) in wavering:
            by.setdefault(_group(d), []).append((i, d))
    return [i for part in by.values() for i, _ in sorted(part, key=lambda p: _size(p[1]))[:MAX_RECHECKED]]


def _judge(ran: Ran, found: list[tuple[int, Difference]], held: set[int]) -> None:
    """Count and keep one function's differing inputs: reproduced unless another input of their group
    showed the output nondeterministic and they did not hold when run again (``held``)."""
    wavering = {_group(d) for _, d in found if d.nondeterministic}
    for i, d in found:
        if d.reproduced and _group(d) in wavering and i not in held:
            d.reproduced, d.nondeterministic = False, True
    every = [d for _, d in found]
    ran.differing = len(every)
    ran.reproduced = sum(d.reproduced for d in every)
    ran.differences = smallest([d for d in every if d.reproduced])
    ran.not_reproduced = smallest([d for d in every if not d.reproduced])


async def _held(
    runner: CodeRunner, batch: Batch, tests: list[TestCase], doubtful: list[int], first: Outcomes
) -> set[int]:
    """The ``doubtful`` inputs that give both versions' first outcomes on :data:`RECHECKS` more runs."""
    repeated = [i for i in doubtful for _ in range(RECHECKS)]
    old, new = await run_both(runner, batch, [tests[i] for i in repeated])
    held = set(doubtful)
    for i, o, n in zip(repeated, old, new, strict=True):
        if o.key() != first[0][i].key() or n.key() != first[1][i].key():
            held.discard(i)
    return held


async def differences(runner: CodeRunner, batch: Batch) -> list[Ran]:
    """Run every target's inputs on both versions, again where they differ; one :class:`Ran` per target of
    the batch. A batch that its first run shows must be split (``batch.split``: one target's code stopped
    the program of all) runs as its parts instead. A language that cannot run here (a SandboxError of a
    JavaScript or Rust batch) is each of its targets' note; Python's is the caller's (no sandbox at all)."""
    pairs = [(fn, call) for _, fn, calls in batch.work for call in calls]
    tests = [batch.request(fn, call, k) for k, (fn, call) in enumerate(pairs)]
    try:
        old, new = await run_both(runner, batch, tests)
        if batch.split is not None and (parts := batch.split([*old, *new])):
            each = await asyncio.gather(*(differences(runner, p) for p in parts))
            return [r for rans in each for r in rans]
        differing = [
            i for i in range(len(pairs)) if old[i].key() != new[i].key() and _compared(old[i], new[i])
        ]
        again_old, again_new = await run_both(runner, batch, [tests[i] for i in differing])
        second = dict(zip(differing, zip(again_old, again_new, strict=True), strict=True))
        founds = [_found(fn, span, pairs, (old, new), second) for fn, span in _spans(batch)]
        doubtful = [i for found in founds for i in _doubtful(found)]
        held = await _held(runner, batch, tests, doubtful, (old, new)) if doubtful else set()
    except SandboxError as e:
        if batch.language == "python":
            raise
        return [Ran(inputs=len(calls), note=f"not run: {e}"[:300]) for _, _, calls in batch.work]
    out: list[Ran] = []
    for (fn, span), found in zip(_spans(batch), founds, strict=True):
        program = kind_of(fn) == "program"
        ran = Ran(inputs=len(span), note=_note([old[i] for i in span], [new[i] for i in span], program))
        _judge(ran, found, held)
        out.append(ran)
    await _shrunk(runner, batch, founds, out)
    return out


def _parts(o: CallOutcome, n: CallOutcome) -> tuple[bool, ...]:
    """Which parts of two outcomes differ: kind, type, value, the arguments left behind, the instance."""
    return tuple(a != b for a, b in zip(o.key(), n.key(), strict=True))


def _types(o: CallOutcome, n: CallOutcome) -> tuple[str, str, str, str]:
    return o.kind, o.type, n.kind, n.type


def _shows(d: Difference) -> Callable[[CallOutcome, CallOutcome], bool]:
    """Whether two outcomes show the difference ``d`` shows: they differ, in the same parts, with the same
    kind and type on each version (a returned value's, an exception's, how a program ended), so that a
    smaller input never shows behaviour the description could ask for when the original does not."""
    want, parts = _types(d.old, d.new), _parts(d.old, d.new)
    return lambda o, n: _compared(o, n) and _types(o, n) == want and _parts(o, n) == parts


async def _shrunk(
    runner: CodeRunner, batch: Batch, founds: list[list[tuple[int, Difference]]], rans: list[Ran]
) -> None:
    """Each target's kept differences with their inputs made smaller (:mod:`.shrink`) where a smaller one
    shows the same and reproduces as a doubted original must (1 + :data:`RECHECKS` more runs, each giving
    both outcomes again); not those of a group that showed the output nondeterministic, nor those on which
    a version ran out of time or memory."""
    goals: list[Goal] = []
    kept: list[tuple[Target, Ran, int]] = []
    for k, ((fn, _), found, ran) in enumerate(zip(_spans(batch), founds, rans, strict=True)):
        wavering = {_group(d) for _, d in found if d.nondeterministic}
        program = kind_of(fn) == "program"
        made = partial(candidates, language=language_of(fn), program=program, fits=_fits(fn))
        for j, d in enumerate(ran.differences):
            slow = {d.old.kind, d.new.kind} & {"timeout", "memory"}
            if _group(d) not in wavering and not slow:
                goals.append(Goal(d.input, k, made, _shows(d)))
                kept.append((fn, ran, j))
    if not goals:
        return

    async def run(calls: list[tuple[int, Call]]) -> Outcomes:
        return await _run_inputs(runner, batch, [(kept[i][0], c) for i, c in calls])

    for (_, ran, j), s in zip(kept, await shrink(goals, run, again=1 + RECHECKS), strict=True):
        if s is not None:
            ran.differences[j] = ran.differences[j].model_copy(
                update={"input": s.call, "old": s.old, "new": s.new}
            )
    for ran in rans:
        ran.differences.sort(key=_size)


def _fits(fn: Target) -> Callable[[Call], bool] | None:
    """A Rust function's smaller inputs must be literals of its parameter types, as its own inputs are
    (:func:`.rust_inputs.takes`); any other target's may be any input."""
    if isinstance(fn, Changed) and fn.language == "rust" and fn.target == "function":
        return partial(takes, fn)
    return None


async def _run_inputs(runner: CodeRunner, batch: Batch, pairs: list[tuple[Target, Call]]) -> Outcomes:
    """Inputs of the batch's targets other than its own (a shrinking round's), on both versions: by the
    batch's programs, or by those :attr:`~.targets.Batch.rebuild` makes with them (a Rust harness, written off
    the event loop); a rebuilt program that does not compile is :class:`~.shrink.RoundFailed`, not an outcome
    of the inputs."""
    run = batch if batch.rebuild is None else await asyncio.to_thread(batch.rebuild, pairs)
    old, new = await run_both(runner, run, [run.request(t, c, 0) for t, c in pairs])
    if run is not batch and any(o.did_not_compile for o in (*old, *new)):
        raise RoundFailed("the harness of the round's inputs does not compile")
    return old, new


def _spans(batch: Batch) -> list[tuple[Target, range]]:
    """Each target of the batch with the indexes of its tests."""
    out, at = [], 0
    for _, fn, calls in batch.work:
        out.append((fn, range(at, at + len(calls))))
        at += len(calls)
    return out


def _found(
    fn: Target, span: range, pairs: list[tuple[Target, Call]], first: Outcomes,
    second: dict[int, tuple[CallOutcome, CallOutcome]],
) -> list[tuple[int, Difference]]:  # fmt: skip
    """The target's inputs that differed on the first run (by test), as differences, with whether their
    second run gave both outcomes again and whether a version gave another value of the same kind."""
    old, new = first
    out = []
    for i in span:
        if i not in second:
            continue
        o2, n2 = second[i]
        d = Difference(
            function=fn.name, target=kind_of(fn), language=language_of(fn), file=fn.file,
            line=fn.first_changed[0], end_line=fn.first_changed[1], input=pairs[i][1], old=old[i], new=new[i],
            reproduced=o2.key() == old[i].key() and n2.key() == new[i].key(),
            nondeterministic=_wavers(old[i], o2) or _wavers(new[i], n2),
        )  # fmt: skip
        out.append((i, d))
    return out


async def run_all(runner: CodeRunner, batches: list[Batch], notes: dict[int, str], count: int) -> list[Ran]:
    """Every batch at once; one :class:`Ran` per target of the stage (``count`` of them, by their index),
    those that ran nothing carrying their note."""
    out = [Ran(note=notes.get(i, "not run")) for i in range(count)]
    results = await asyncio.gather(*(differences(runner, b) for b in batches))
    for batch, ran in zip(batches, results, strict=True):
        for (i, _, _), r in zip(batch.work, ran, strict=True):
            out[i] = r
    return out
