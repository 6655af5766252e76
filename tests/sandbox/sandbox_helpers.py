"""Small builders for sandbox tests."""

from __future__ import annotations

from memdoor.core.problem import TestCase


def stdin_tests(*pairs: tuple[str, str | None]) -> list[TestCase]:
    return [TestCase(kind="stdin", input=i, output=o) for i, o in pairs]


def fn_tests(*pairs: tuple[str, str | None]) -> list[TestCase]:
    return [TestCase(kind="functional", input=i, output=o) for i, o in pairs]


def numpy_in_sandbox(sb) -> bool:
    """Whether candidates can import numpy (Debian's python3-numpy); the official grader's environment has it."""
    return sb.run("import numpy", [TestCase(kind="stdin", input="\n", output="")], prelude="none").passed
