"""What the differential stage compares besides Python functions, and the seam every kind of target fits.

A **target** is one changed thing run on the base and on the change with the same inputs: a Python function
(:class:`~memdoor.review.differential.functions.ChangedFunction`), or a :class:`Changed` — a standard-input
program (Python, JavaScript or Rust) or a JavaScript or Rust function. A :class:`Batch` is one sandbox
program per version with the tests of its targets: how a language runs what it found
(:mod:`memdoor.review.differential.plan`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult
from memdoor.review.differential.driver import CallOutcome
from memdoor.review.differential.functions import ChangedFunction, around, changed_spans
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.seal import new_nonce

Language = Literal["python", "javascript", "rust"]
TargetKind = Literal["function", "program"]
JsKind = Literal["function", "method", "staticmethod", "constructor"]
"""How a JavaScript function is called: itself, on ``new X()``, on the class ``X``, or as ``new X(...)``."""
FENCE_TAG: dict[str, str] = {"python": "python", "javascript": "javascript", "rust": "rust"}
COMMENT: dict[str, str] = {"python": "#", "javascript": "//", "rust": "//"}
_GAP = re.compile(r"^( *)# (… (?:lines left out|cut) …)$", re.M)  # how :func:`around` marks a gap


class Changed(BaseModel):
    """A changed standard-input program, or a changed JavaScript or Rust function."""

    target: TargetKind
    language: Language
    file: str = Field(description="Its file after the change (repository path).")
    old_file: str
    name: str = Field(description="The function's name, or the program's path.")
    params: list[tuple[str, str]] = Field(
        default_factory=list, description="A function's parameters: (name, declared type or default text)."
    )
    old_source: str
    new_source: str
    line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    changed_lines: list[int] = Field(default_factory=list)
    literals: list[Any] = Field(default_factory=list, description="Literals on the changed lines.")
    why: str = "its code changed"
    kind: JsKind = Field(default="function", description="How a JavaScript function is called (``X.m``).")

    @property
    def signature(self) -> str:
        if self.target == "program":
            return f"{self.name} (reads standard input)"
        return f"{self.name}({', '.join(f'{n}: {t}' if t else n for n, t in self.params)})"

    @property
    def first_changed(self) -> tuple[int, int]:
        lines = self.changed_lines or [self.line]
        return lines[0], lines[-1]

    def excerpts(self, limit: int = 4000) -> tuple[str, str]:
        """The old and the new source for a prompt (whole, or the lines around the changed ones)."""
        if len(self.old_source) + len(self.new_source) <= limit:
            return self.old_source, self.new_source
        old, new = self.old_source.splitlines(), self.new_source.splitlines()
        o_idx, n_idx = changed_spans(old, new)
        gap = rf"\1{COMMENT[self.language]} \2"  # the gaps marked as the language comments
        return (
            _GAP.sub(gap, around(old, o_idx, limit // 2)),
            _GAP.sub(gap, around(new, n_idx, limit // 2)),
        )


Target = ChangedFunction | Changed


def language_of(t: Target) -> Language:
    return t.language if isinstance(t, Changed) else "python"


def kind_of(t: Target) -> TargetKind:
    return t.target if isinstance(t, Changed) else "function"


def changed_lines(old: str, new: str, first: int = 1) -> tuple[list[int], list[int]]:
    """The 1-based numbers of the old and new lines that differ (``first``: the new text's first line)."""
    o_idx, n_idx = changed_spans(old.splitlines(), new.splitlines())
    return [i + 1 for i in o_idx], sorted({first + i for i in n_idx})


@dataclass(frozen=True)
class Batch:
    """One sandbox program per version and the tests of its targets (``work``: the stage's index of each
    target, the target, its inputs). ``request`` makes the test of one input (``k``: its position among
    the batch's inputs), ``read`` reads a test's result as an outcome (untrusted data), given ``nonce``:
    every test's input starts with it, and only a result line that carries it is read (:mod:`.seal`; one
    per batch, so that a version's output is the same text in every run). ``split``, given the first run's
    outcomes (both versions'), gives the batches to run instead, which together hold ``work`` in its order:
    none (``[]``) unless one target's part of the program stopped all of them. ``rebuild``, for programs that
    hold their inputs (a Rust harness), gives the batch that runs other inputs of its targets (a shrinking
    round's: each ``(target, input)`` made by the new batch's ``request``); None: this one runs any input."""

    language: Language
    old_code: str
    new_code: str
    work: list[tuple[int, Target, list[Call]]]
    request: Callable[[Target, Call, int], TestCase]
    read: Callable[[TestResult, str], CallOutcome]
    split: Callable[[list[CallOutcome]], list[Batch]] | None = None
    rebuild: Callable[[list[tuple[Target, Call]]], Batch] | None = None
    nonce: str = field(default_factory=new_nonce)
