"""The functional-example reader on hostile requests: its work grows with the request, not with its square.

``memdoor serve`` reads every request before it answers anyone; 40 KB of ``f(`` once held the server 22 s,
``For`` and 4 KB of spaces two minutes (the readers' work grew with the square or the cube of a line).
The work is bounded without timing it: lines of Python counted, regular expressions run in a child that must
end (:mod:`bounded_helpers`), calls parsed counted.
"""

from __future__ import annotations

import random

import pytest

from bounded_helpers import ends, lines_run
from memdoor.problems import call_examples
from memdoor.problems.call_examples import MAX_CALL_TEXT, MAX_CALLS, MAX_PARSE_CHARS, functional_examples
from memdoor.problems.signatures import Target

F = Target("f", params=("x",))


def scanned_closing(line: str, open_at: int, limit: int = 2000) -> int | None:
    """Where the bracket at ``open_at`` closes, read character by character from it (the reader's former
    way, one scan of up to ``limit`` characters per call): the reference for the one-pass matching."""
    depth, i, quote = 0, open_at, ""
    while i < min(len(line), open_at + limit):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def test_brackets_close_where_a_scan_from_each_of_them_finds():
    rng = random.Random(20261206)
    for _ in range(20_000):
        line = "".join(rng.choice("()[]{}'\"\\ax") for _ in range(rng.randint(0, 30)))
        closes = call_examples._closings(line)
        for i, c in enumerate(line):
            if c in "([{":
                assert call_examples._closing(closes, i) == scanned_closing(line, i), (line, i)
    wide = (
        "f(" + "x" * 1996 + ")(" + "y" * 3000 + ")"
    )  # the first closes within 2,000 characters, not the second
    closes = call_examples._closings(wide)
    assert call_examples._closing(closes, 1) == 1998 and call_examples._closing(closes, 1999) is None


@pytest.mark.parametrize(
    "line",
    [
        "f(" * 45_000,  # calls that never close
        "f('" * 30_000,  # each opening a string
        "f(" * 22_000 + "1" + ")" * 22_000 + " == 3",  # nested, each closing
        "`f(`" * 22_000,
    ],
)
def test_the_calls_of_a_line_are_read_in_work_linear_in_its_length(line):
    text = "Write f(x).\n" + line
    assert len(text) < MAX_CALL_TEXT  # read whole: linear by the reading, not by the cap
    tests, _ = lines_run(call_examples, 40 * len(text), lambda: functional_examples(text, F))
    assert tests == []


def test_calls_with_a_result_are_parsed_within_a_budget_of_characters(monkeypatch):
    """Each call followed by an arrow or ``=`` costs parses of its arguments and of up to 2,000 characters
    after it; once a reader has spent MAX_PARSE_CHARS (in the check for a formula, then in the examples)
    the rest of the request is not read for them."""
    parsed = []
    real = call_examples.call_args

    def counted(text, params):
        parsed.append(text)
        return real(text, params)

    monkeypatch.setattr(call_examples, "call_args", counted)
    line = "f(1) = f(1) + " + "1 + " * 300 + "1\n"  # every call reads a long value
    text = "Write f(x).\n" + line * 80  # 80 lines, 2 calls each, with "=" after them, no example
    assert len(text) < MAX_CALL_TEXT
    assert functional_examples(text, F) == []
    assert 0 < len(parsed) < 2 * 160  # stopped by the budget, not by the end of the text
    assert len(parsed) <= 2 * (MAX_PARSE_CHARS // MAX_CALLS)


def test_an_example_after_hundreds_of_calls_that_do_not_parse_is_read():
    text = "Write f(x).\n" + "".join(f"f(n{i}) == n{i} + 1\n" for i in range(300)) + "So f(1) == 2 holds.\n"
    assert [(t.input, t.output) for t in functional_examples(text, F)] == [("1", "2")]


def test_a_line_the_cap_cuts_gives_no_example():
    filler = "Some words of the statement.\n" * (MAX_CALL_TEXT // 29 + 10)
    head = "Write f(x).\nFirst, f(1) == 2.\n" + filler
    text = head[: MAX_CALL_TEXT - 11] + "\nf(5) == 12345.\n"  # the cap falls inside 12345
    seen = {(t.input, t.output) for t in functional_examples(text, F)}
    assert ("5", "12") not in seen  # the cut line is no example ("12345", read whole elsewhere, may be)
    assert ("1", "2") in seen


def test_examples_are_read_in_the_first_max_call_text_characters():
    filler = "Some words of the statement.\n" * (MAX_CALL_TEXT // 29 + 10)
    text = "Write f(x).\nFirst, f(1) == 2.\n" + filler + "Then f(2) == 3.\n"  # calls in a sentence
    assert len(text) > MAX_CALL_TEXT
    assert [t.input for t in functional_examples(text, F)] == ["1"]  # the call past the cap is not read


def test_a_value_tried_at_many_commas_is_tried_at_the_last_forty():
    args = "x = 1, the words after it" + "," * 60
    text = f"Write f(x).\nFor {args} the output should be 3\nFor x = 2, y the output should be 4"
    assert [t.input for t in functional_examples(text, F)] == ["2"]  # 60 commas: the first is not reached


@pytest.mark.parametrize(
    ("head", "piece", "tail"),
    [
        ("For", " ", "x"),  # took hours: three ways to share the blanks
        ("For x = 1", " ", "x"),
        ("Input", " ", "x"),  # an Input marker: a quarter of an hour for 8 KB
        ("Input: a", " ", "x"),
        ("Input: a", "*", "x"),
        ("Example", " ", "x"),  # the "Example 1:" lead of a line
        ("f(1) == 1", " ", "x"),  # a doctest-style line
        ("For x = 1", ",", " the output should be 3"),
    ],
    ids=["for", "for-args", "input", "input-inline", "input-emphasis", "example", "doctest", "for-commas"],
)
def test_a_line_of_400_kb_is_read_to_the_end(head, piece, tail):
    ends(
        "from memdoor.problems.call_examples import functional_examples\n"
        "from memdoor.problems.signatures import Target\n"
        f"text = 'Write f(x).\\n' + {head!r} + {piece!r} * 400_000 + {tail!r}\n"
        "functional_examples(text, Target('f', params=('x',)))"
    )
