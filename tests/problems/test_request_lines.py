"""Reading a request's lines: the Input/Output markers as before, and no line read again and again (a request
is untrusted text, read by ``memdoor serve`` before it answers anyone)."""

from __future__ import annotations

import pytest

from bounded_helpers import ends
from memdoor.problems.request_lines import MARK, example_calls


@pytest.mark.parametrize(
    ("line", "kind", "inline"),
    [
        ("Input: nums = [1, 2]", "Input", "nums = [1, 2]"),
        ("Sample Output 2:", "Output", ""),
        ("Output: 3 **  ", "Output", "3 "),  # the emphasis and blanks that end the line are left out
        ("Input: a * b *", "Input", "a * b "),
        ("Input: a * *  ", "Input", "a * "),  # the shortest text after which only emphasis, then blanks, come
        ("Inputs", "Input", None),
    ],
)
def test_markers_and_their_inline_text(line, kind, inline):
    m = MARK.match(line)
    assert m is not None and m["kind"] == kind and m["inline"] == inline


def test_lines_that_are_not_markers():
    assert MARK.match("Input is a list of numbers") is None
    assert MARK.match("Input * x") is None


@pytest.mark.parametrize(
    "call",
    [
        "example_calls('f(' + ' ' * 400_000 + 'x')",  # an arrow searched for from every blank
        "stdin_examples('Input' + ' ' * 400_000 + 'x')",  # a marker: a quarter of an hour for 8 KB
        "stdin_examples('Sample Input 1: a' + ' ' * 400_000 + 'x')",
    ],
)
def test_a_line_of_400_kb_is_read_to_the_end(call):
    ends(
        "from memdoor.problems.request_lines import example_calls\n"
        f"from memdoor.problems.stdin_samples import stdin_examples\n{call}"
    )


def test_example_calls_still_need_an_arrow():
    assert example_calls("f(1) == 2\ng(2)   x\n>>> h(3)\nk(1)   returns 2") == {"f": 1, "h": 1, "k": 1}
