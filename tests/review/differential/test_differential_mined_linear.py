"""Mining the calls of a JavaScript function or method from a test file stays linear in the file's length:
each call's brackets are looked up in partners found once per file, not searched for per call, so a hostile
test file of 200 KB of unclosed calls is read in well under a few seconds; what is mined is unchanged."""

from __future__ import annotations

import pytest
from differential_helpers import finishes

from memdoor.review.differential.json_inputs import mined_calls
from memdoor.review.differential.jsscan import matching, partners, tokens

SIZE = 200_000
HOSTILE = {  # text of about SIZE characters, the name mined and on which receiver
    "function": ("f(" * (SIZE // 2), "f", None),
    "static method": ("X.m(" * (SIZE // 4), "m", "X"),
    "method on anything": ("a.m(" * (SIZE // 4), "m", "*"),
    "constructor": ("new X(" * (SIZE // 6), "X", None),
    "flat arguments": ("X.m(1, " * (SIZE // 7), "m", "X"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_mining_the_calls_of_a_hostile_test_file_takes_linear_time(case):
    text, name, receiver = HOSTILE[case]
    finishes(lambda: mined_calls([text], name, receiver=receiver))


def test_bracket_partners_are_what_matching_finds_and_mined_calls_are_as_before():
    src = "f([1, {a: (2)}], g(3)) ) ( [ ] ( x"
    toks = tokens(src)
    pairs = partners(toks)
    opens = [i for i, t in enumerate(toks) if t.text in "([{" and t.kind == "punct"]
    assert [pairs[i] for i in opens] == [matching(toks, i) for i in opens]
    test = "f(1, [2, {a: 'x'}]);\nf(g(1));\nf(-3, null, true);\nf(1, [2, {a: 'x'}]);\n"
    assert [c.text for c in mined_calls([test], "f")] == ['[1, [2, {"a": "x"}]]', "[-3, null, true]"]
