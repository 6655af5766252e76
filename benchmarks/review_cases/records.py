"""The records of the review benchmark: a function under review, a candidate change, a built case."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memdoor.core.problem import Problem
from review_cases.edits import Edit

CaseKind = Literal["missed", "caught", "refactor", "intended", "mixed"]
"""What a case is, decided by its hidden tests:

- ``missed``: a bug every public test passes and a hidden test fails — the case that matters;
- ``caught``: a bug a public test fails;
- ``refactor``: behaviour preserved (every hidden test passes and it agrees with the reference on random
  inputs), with a refactoring description;
- ``intended``: the behaviour change the description asks for, and nothing else on the inputs tried;
- ``mixed``: the change the description asks for plus a bug beside it.
"""

KINDS: tuple[CaseKind, ...] = ("missed", "caught", "refactor", "intended", "mixed")
BUGS: frozenset[str] = frozenset({"missed", "caught", "mixed"})
"""Kinds a review should flag (the positives); refactorings and intended changes should pass quietly."""


class Example(BaseModel):
    """One docstring example as a public test: the call's arguments and its result (or the exception the
    changed code's tests expect)."""

    model_config = ConfigDict(frozen=True)

    args: list[Any]
    expected: Any = None
    raises: str | None = Field(default=None, description="An exception class name instead of a result.")


class Source(BaseModel):
    """A function with its reference solution, public examples and hidden check."""

    model_config = ConfigDict(frozen=True)

    problem_id: str
    entry: str = Field(description="The function under review.")
    code: str = Field(description="solution.py at the base: the prompt and the reference solution.")
    problem: Problem = Field(description="Memdoor's problem: its hidden test is the official check().")
    examples: list[Example] = Field(description="The docstring examples (public tests).")
    seeds: list[list[Any]] = Field(description="Argument lists known to be valid: examples, check()'s calls.")


class Variant(BaseModel):
    """A candidate change of a source: edits, what they do, and how its kind is checked."""

    model_config = ConfigDict(frozen=True)

    family: Literal["mutant", "refactor", "intent"]
    name: str = Field(description="The operator or transform, e.g. 'comparison < to <='.")
    edits: tuple[Edit, ...]
    description: str = Field(default="", description="The change's description (refactorings, intents).")
    prop: str | None = Field(default=None, description="Intents: source of _property(f, g) (see checks).")
    domain: str | None = Field(
        default=None,
        description="Intents: an expression over `args` where the change must agree with the reference.",
    )
    plain: bool = Field(default=False, description="Compare tuples as lists in the agreement check.")


class ReviewCase(BaseModel):
    """One benchmark case: a base and a changed ``solution.py`` and ``test_public.py``, a description, and
    what the hidden tests said (which decides ``kind``; the tests themselves never reach the review)."""

    id: str
    problem_id: str
    entry: str
    kind: CaseKind
    transform: str
    description: str
    claim: str = Field(default="", description="Bugs: what the description claims (refactor, vague, fix).")
    before: str
    after: str
    tests_before: str
    tests_after: str
    changed: list[int] = Field(description="After-side lines of solution.py the change touches.")
    public_fails: bool = Field(
        description="A public test fails on the changed code (the test stage can see it)."
    )
    evidence: dict[str, str] = Field(
        default_factory=dict, description="Each hidden test's status on the changed code (names only)."
    )

    def digest(self) -> str:
        """What the review sees of the case (code, tests, description), hashed: results of a resumed run
        belong to this case only if it is the same."""
        seen = [self.before, self.after, self.tests_before, self.tests_after, self.description]
        return hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:16]
