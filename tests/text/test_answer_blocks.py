"""The texts of a model's answer tried for its structured reply, in order."""

from memdoor.text.answer_blocks import candidates, fenced_blocks, outer_span


def test_json_blocks_come_first_each_kind_the_last_first():
    text = "```python\nA\n```\n```json\nB\n```\n```\nC\n```\n```JSON\nD\n```"
    assert fenced_blocks(text) == ["D\n", "B\n", "C\n", "A\n"]


def test_the_whole_answer_then_its_spans_follow_the_blocks():
    text = 'say {"a": [1]} and [2]'
    assert candidates(text) == [text, '{"a": [1]}', "[1]} and [2]"]
    assert candidates(text, spans=("[]",)) == [text, "[1]} and [2]"]
    assert candidates("```json\n[]\n```", spans=()) == ["[]\n", "```json\n[]\n```"]


def test_no_span_without_both_brackets_in_order():
    assert outer_span("] then [") is None
    assert outer_span("no brackets", "{}") is None
