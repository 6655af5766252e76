"""Call inputs: our own from the signature and the changed lines, the agents' as Python literals only."""

from __future__ import annotations

import ast
import json

from memdoor.review.differential.functions import ChangedFunction, Param
from memdoor.review.differential.inputs import (
    MAX_OWN_INPUTS,
    MAX_VARIED_INPUTS,
    make_call,
    own_inputs,
    read_inputs,
)

NEW = "def spread(xs):\n    return max(xs) - min(xs) - 1\n"


def fn(params: list[Param], literals=()) -> ChangedFunction:
    return ChangedFunction(file="m.py", old_file="m.py", module="m", import_root="", name="spread",
                           params=params, old_source="", new_source=NEW, line=1, end_line=2,
                           literals=list(literals))  # fmt: skip


def values(calls) -> list[list]:
    return [ast.literal_eval(c.text) for c in calls]


def test_own_inputs_try_the_changed_lines_literals_and_their_neighbours():
    got = values(own_inputs(fn([Param(name="xs", kind="positional")], literals=[7])))
    assert [7] in got and [6] in got and [8] in got  # k, k - 1, k + 1
    assert [[]] in got and [[1, 2, 3]] in got and [None] in got  # the mixed pool
    assert len(got) == len({repr(g) for g in got}) <= 24


def test_own_inputs_follow_annotations_and_defaults():
    params = [
        Param(name="s", kind="positional", annotation="str"),
        Param(name="n", kind="positional", annotation="int", default="3"),
    ]
    got = values(own_inputs(fn(params)))
    assert got[0] == [""]  # the required argument alone first
    assert ["abc"] in got and ["", 3] in got and ["", -1] in got
    assert all(isinstance(g[0], str) for g in got)


def test_own_inputs_skip_required_keyword_only_arguments():
    assert own_inputs(fn([Param(name="k", kind="keyword_only")])) == []
    assert own_inputs(fn([Param(name="k", kind="keyword_only")]), mined=[[1]]) == []


def test_own_inputs_start_with_calls_found_in_the_base_then_their_variations_and_the_signatures_in_turn():
    params = [Param(name="xs", kind="positional")]
    got = values(own_inputs(fn(params), mined=[[[5, 1, 9]], [[2, 2]]]))
    assert got[:2] == [[[5, 1, 9]], [[2, 2]]]  # real usage first
    assert got[2:6] == [[[]], [1], [[2]], [0]]  # a variation, a signature input, in turn
    assert [[9, 1, 5]] in got and [[-5, -1, -9]] in got and [None] in got
    assert len(got) == len({repr(g) for g in got}) <= 2 + MAX_VARIED_INPUTS + MAX_OWN_INPUTS
    assert values(own_inputs(fn(params))) == values(own_inputs(fn(params), mined=[]))  # none found: as before


def test_an_agent_writes_argument_lists_of_literal_texts():
    answer = 'Here:\n```json\n[["[1, 2, 3]"], ["[]"], ["(1, -2)"], ["{\'a\': None}"]]\n```'
    read = read_inputs(answer, "spread", "agent0", 8)
    assert values(read.calls) == [[[1, 2, 3]], [[]], [(1, -2)], [{"a": None}]]
    assert read.rejected == [] and all(c.source == "agent" and c.agent == "agent0" for c in read.calls)


def test_malicious_argument_texts_are_rejected_by_literal_eval(tmp_path):
    marker = tmp_path / "pwned"
    evil = f"__import__('os').system('touch {marker}')"
    read = read_inputs(json.dumps([[evil], ["[1]"], ["(lambda: 1)()"]]), "spread", "agent0", 8)
    assert values(read.calls) == [[[1]]]
    assert len(read.rejected) == 2 and "not a Python literal" in read.rejected[0]
    lines = read_inputs(f"spread({evil})\nspread([2, 3])\n", "spread", "agent1", 8)
    assert values(lines.calls) == [[[2, 3]]] and lines.rejected == ["a call whose arguments are not literals"]
    assert not marker.exists()


def test_json_values_python_literals_and_call_lines_are_read():
    assert values(read_inputs("[[[1, 2]], [[]]]", "spread", "a", 8).calls) == [[[1, 2]], [[]]]
    assert values(read_inputs("```python\n[[(1, 2)], [None]]\n```", "spread", "a", 8).calls) == [
        [(1, 2)],
        [None],
    ]
    assert values(read_inputs(">>> spread([5])\nspread(xs=[1])\n", "spread", "a", 8).calls) == [[[5]]]
    assert read_inputs("I would test the empty list.", "spread", "a", 8).unreadable


def test_inputs_are_capped_in_count_and_size():
    many = json.dumps([[str(i)] for i in range(40)])
    read = read_inputs(many, "spread", "a", limit=8)
    assert len(read.calls) == 8 and read.rejected[-1].startswith("inputs over the limit")
    huge = read_inputs(json.dumps([["[" + "1, " * 2000 + "1]"]]), "spread", "a", 8)
    assert huge.calls == [] and len(huge.rejected) == 1
    assert make_call([10**5000]) is None and make_call([float("inf")]) is None and make_call([1]) is not None
    nested = read_inputs(json.dumps([["[" * 5000 + "]" * 5000]]), "spread", "a", 8)
    assert nested.calls == []
