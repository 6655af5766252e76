"""The texts of a model's answer tried for its structured reply, in order."""

import time

from memdoor.text.answer_blocks import candidates, fenced_blocks, fences, outer_span


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


def test_fences_are_read_as_before_a_tag_on_the_opening_line_and_the_body_up_to_the_next_fence():
    assert fences("``` json extra\nX\n```") == [("json", "X\n")]
    assert fences("````json\nA\n````") == [("", "A\n")]  # a fence, then one backtick and the rest of the line
    assert fences("```\nA```B\n```C\n```") == [("", "A"), ("C", "")]
    assert fences("``\n```js\nQ```") == [("js", "Q")]
    assert fences("```json [1]```") == fences("a ```py\nx") == []  # no line end, no closing fence


def test_a_long_run_of_backticks_is_read_in_linear_time():
    text = "`" * 100_000  # 6 s for the regular expression this scan replaced
    started = time.perf_counter()
    assert candidates(text) == [text] and fences("```\n" + text) == [("", "")]
    assert time.perf_counter() - started < 2
