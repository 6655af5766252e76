"""Small builders for sandbox tests."""

from __future__ import annotations

from memdoor.problems.model import TestCase


def stdin_tests(*pairs: tuple[str, str | None]) -> list[TestCase]:
    return [TestCase(kind="stdin", input=i, output=o) for i, o in pairs]


def fn_tests(*pairs: tuple[str, str | None]) -> list[TestCase]:
    return [TestCase(kind="functional", input=i, output=o) for i, o in pairs]
