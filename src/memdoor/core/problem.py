"""The one problem type every part of Memdoor shares."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TestKind = Literal["stdin", "functional", "check"]
"""How a test runs a candidate.

- ``stdin``: the program reads ``input`` on standard input; its output is compared with ``output``
  by LiveCodeBench's rules.
- ``functional``: ``input`` holds one JSON value per line, the positional arguments of ``func_name``
  (a ``class Solution`` method if the code defines ``class Solution``, else a module-level function);
  passes iff the result (tuples made lists) ``==`` ``json.loads(output)``.
- ``check``: HumanEval style; ``input`` is test code defining ``check(candidate)``, called with the
  function named ``func_name``; passes iff it raises nothing. ``output`` is unused.
"""


class TestCase(BaseModel):
    """One test: an input and, when known, the expected output."""

    model_config = ConfigDict(frozen=True)
    __test__ = False  # not a pytest class

    kind: TestKind = Field(description="How the test runs the candidate (see TestKind).")
    input: str = Field(description="Standard input, JSON argument lines, or check() source, by kind.")
    output: str | None = Field(
        default=None,
        description="Expected output (stdin text or JSON text). None: only record what the candidate produces.",
    )


class Problem(BaseModel):
    """A programming problem with public tests (visible to agents) and hidden tests (grading only)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Stable id: LiveCodeBench question_id, HumanEval task_id, or the user's id.")
    title: str = Field(default="", description="Short human-readable title.")
    statement: str = Field(description="The problem text shown to agents.")
    starter_code: str = Field(default="", description="Code the answer must start from (signature, class).")
    func_name: str | None = Field(
        default=None, description="Function or method to call for functional/check tests (entry point)."
    )
    public_tests: list[TestCase] = Field(default_factory=list, description="Examples agents may see and run.")
    hidden_tests: list[TestCase] = Field(default_factory=list, description="Grading-only tests; never shown.")
    prelude: Literal["livecodebench", "none"] = Field(
        default="none",
        description="Code run before the candidate: LiveCodeBench's import prelude and limits, or nothing.",
    )
    grading_prefix: str = Field(
        default="",
        description="Code placed before the candidate when grading (HumanEval: the prompt, as the official grader does).",
    )
    grade_on: Literal["all", "hidden"] = Field(
        default="all",
        description="Tests that grade a final answer: public then hidden (LiveCodeBench), or hidden only "
        "(HumanEval: its official grader runs check() alone; docstring examples are hints, a few are wrong).",
    )
    language: Literal["python", "javascript", "rust"] = Field(
        default="python",
        description="Language of the answer and of the tests: python (the harness), javascript (node) or rust "
        "(compiled in the sandbox); see memdoor.sandbox.lang.",
    )
    difficulty: str | None = Field(default=None, description="easy / medium / hard, when known.")
    platform: str | None = Field(
        default=None, description="leetcode, atcoder, codeforces, humaneval, user..."
    )
    release_date: date | None = Field(default=None, description="When the problem was published, when known.")
    source: str = Field(default="", description="Where the problem was loaded from (file path or package).")

    @property
    def kind(self) -> TestKind:
        """The kind of this problem's public tests (stdin or functional)."""
        tests = self.public_tests or self.hidden_tests
        if not tests:
            return "functional" if self.func_name else "stdin"
        return tests[0].kind

    @property
    def all_tests(self) -> list[TestCase]:
        """Public tests then hidden tests, the order the official grader uses."""
        return [*self.public_tests, *self.hidden_tests]

    @property
    def grading_tests(self) -> list[TestCase]:
        """The tests a final answer is graded on, as the official grader of the problem's benchmark does."""
        if self.grade_on == "hidden" and self.hidden_tests:
            return list(self.hidden_tests)
        return self.all_tests

    @property
    def graded_on(self) -> Literal["public+hidden", "hidden", "public"]:
        """Which tests :attr:`grading_tests` holds, as a short label for results."""
        if not self.hidden_tests:
            return "public"
        return "hidden" if self.grade_on == "hidden" else "public+hidden"

    def public_view(self) -> Problem:
        """This problem as agents may see it: hidden tests removed. Strategies only ever get this."""
        return self.model_copy(update={"hidden_tests": []})
