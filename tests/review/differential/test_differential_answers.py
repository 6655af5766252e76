"""memdoor.review.differential.answers: an agent's inputs read strictly as a JSON list."""

from __future__ import annotations

from memdoor.review.differential.answers import json_list, read_list
from memdoor.review.differential.inputs import Call


def _make(item):
    return Call(text=repr([item])) if isinstance(item, int) else f"not an int: {item!r}"


def test_a_fenced_json_list_is_read_before_the_prose_around_it():
    text = "Here are [1] inputs:\n```json\n[1, 2, 3]\n```\n"
    assert json_list(text, lambda data: True) == [1, 2, 3]


def test_an_object_with_inputs_is_read_and_a_list_that_does_not_fit_is_passed_over():
    assert json_list('{"inputs": [4, 5]}', lambda data: True) == [4, 5]
    assert json_list("[1, 2]", lambda data: len(data) > 2) is None
    assert json_list("no list here", lambda data: True) is None


def test_items_become_inputs_or_reasons_duplicates_dropped_within_the_limit():
    read = read_list('[1, "x", 1, 2, 3, 4]', lambda data: True, _make, limit=3)
    assert [c.text for c in read.calls] == ["[1]", "[2]", "[3]"]
    assert read.rejected == ["not an int: 'x'", "inputs over the limit of 3"]
    assert not read.unreadable


def test_an_answer_without_a_list_is_unreadable():
    read = read_list("I cannot help with that.", lambda data: True, _make, limit=3)
    assert read.unreadable and read.calls == [] and read.rejected == []
