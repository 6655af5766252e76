"""Values too long or too deep for what a driver writes still compare by what they are: a result line fits
in the output the sandbox keeps (text other than ASCII written as itself, long shown texts cut, compared by
their digests); a line that cannot be read is a crash compared by its digest; and a value nested deeper
than the drivers write (40 levels) is written with a digest of its whole, read in bounded time."""

from __future__ import annotations

import json

import pytest

from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import CallOutcome, outcome, program
from memdoor.review.differential.execute import run_version
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_call_request, js_program, read_js
from memdoor.review.differential.seal import head, new_nonce
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")


def call(name: str, arguments: str) -> TestCase:
    return TestCase(kind="stdin", input=json.dumps({"m": "m", "f": name, "c": "function", "a": arguments}))


async def python_pair(
    sandbox, old: str, new: str, tests: list[TestCase]
) -> list[tuple[CallOutcome, CallOutcome]]:
    judge = Judge(sandbox)
    olds = await run_version(judge, program({"m.py": old}, [""]), tests, outcome)
    news = await run_version(judge, program({"m.py": new}, [""]), tests, outcome)
    return list(zip(olds, news, strict=True))


async def js_pair(
    sandbox, old: str, new: str, calls: list[tuple[str, str]]
) -> list[tuple[CallOutcome, CallOutcome]]:
    judge, tests = Judge(sandbox), [js_call_request("m.js", name, Call(text=text)) for name, text in calls]
    olds = await run_version(judge, js_program({"m.js": old}), tests, read_js, "javascript")
    news = await run_version(judge, js_program({"m.js": new}), tests, read_js, "javascript")
    return list(zip(olds, news, strict=True))


GREET = "def greet(n):\n    return '\\U0001F600' * n\n"


async def test_a_long_python_value_of_text_other_than_ascii_still_differs(sandbox):
    (pair,) = await python_pair(sandbox, GREET, GREET.replace("1F600", "1F641"), [call("greet", "[400]")])
    old, new = pair
    assert old.kind == new.kind == "return" and old.text.startswith("'\U0001f600")
    assert old.key() != new.key()


LONG_EVERYTHING = """class E(Exception):
    pass


E.__qualname__ = 'Q' * 5000 + TAIL


def bad(a):
    a.append('\\x01' * 5000 + TAIL + '\\ud800')
    raise E('\\x01\\u2028' * 5000)


def ret(a):
    a.append('\\x01' * 5000 + TAIL)
    return '\\x01' * 5000 + '\\u2028\\x85' + TAIL
"""


async def test_a_python_result_whose_every_field_is_long_is_read_and_compared(sandbox):
    old = LONG_EVERYTHING.replace("TAIL", "'a'")
    pairs = await python_pair(
        sandbox, old, old.replace("'a'", "'b'"), [call("bad", "[[]]"), call("ret", "[[]]")]
    )
    for o, n in pairs:
        assert o.kind == n.kind and o.kind in ("raise", "return") and o.mutated is not None
        assert o.key() != n.key()
    (raised, _), _ = pairs
    assert raised.type.startswith("m.QQQ") and len(raised.type) < 200


@needs_node
async def test_a_javascript_result_whose_every_field_is_long_is_read_and_compared(sandbox):
    source = """function bad(a) {
  a.push('\\u0001'.repeat(5000) + TAIL);
  const e = new Error('\\u0001\\u2028'.repeat(5000));
  e.name = 'N'.repeat(5000) + TAIL;
  throw e;
}
function ret(a) { a.push('\\u{1F600}'.repeat(5000) + TAIL); return '\\u2028\\u0085'.repeat(5000) + TAIL; }
"""
    old = source.replace("TAIL", "'a'")
    pairs = await js_pair(sandbox, old, old.replace("'a'", "'b'"), [("bad", "[[]]"), ("ret", "[[]]")])
    for o, n in pairs:
        assert o.kind == n.kind and o.kind in ("raise", "return") and o.mutated is not None
        assert o.key() != n.key()


def test_an_unreadable_result_line_is_a_crash_compared_by_its_digest():
    nonce = new_nonce()

    def read(line: str) -> CallOutcome:
        return outcome(TestResult(status="passed", output=head(nonce) + line + "\n"), nonce)

    first, second, again = (
        read('{"k": "return", "r": "\\u00'),
        read('{"k": "return", "r": "\\u01'),
        read('{"k": "return", "r": "\\u00'),
    )
    assert first.kind == second.kind == "crash"
    assert first.key() != second.key() and first.key() == again.key()
    none = outcome(TestResult(status="passed", output=""), nonce)
    assert none.kind == "crash" and none.key() == CallOutcome(kind="crash", text="other").key()


NEST = "def nest(n):\n    v = LEAF\n    for _ in range(n):\n        v = [v]\n    return v\n"


async def test_a_python_value_differing_below_depth_40_still_differs(sandbox):
    tests = [call("nest", "[3]"), call("nest", "[45]")]
    pairs = await python_pair(sandbox, NEST.replace("LEAF", "1"), NEST.replace("LEAF", "2"), tests)
    for o, n in pairs:
        assert o.kind == n.kind == "return" and o.key() != n.key()
    assert "...#" in pairs[1][0].text


HUGE = """def chain(n):
    v = 0
    for _ in range(n):
        v = [v]
    return v


def shared(n):
    v = [0]
    for _ in range(n):
        v = [v, v]
    return chain_around(v)


def chain_around(v):
    for _ in range(45):
        v = [v]
    return v


def circular(n):
    v = []
    v.append(v)
    return chain_around(v)
"""


async def test_a_huge_or_circular_deep_python_value_is_read_in_bounded_time(sandbox):
    """A chain 300,000 deep, one whose deep part shares itself 2**60 ways and a circular one: each is
    written (its deep part's digest cut after MAX_NODES values), never a timeout or a crash; a chain 1,000
    deep is read whole."""
    tests = [
        call("chain", "[300000]"),
        call("shared", "[60]"),
        call("circular", "[0]"),
        call("chain", "[1000]"),
    ]
    pairs = await python_pair(sandbox, HUGE, HUGE.replace("v = 0", "v = 1"), tests)
    for o, n in pairs:
        assert o.kind == n.kind == "return" and "...#" in o.text
    assert [o.key() != n.key() for o, n in pairs[1:]] == [False, False, True]


@needs_node
async def test_a_javascript_value_differing_below_depth_40_still_differs(sandbox):
    source = (
        "function nest(n) { let v = LEAF; for (let i = 0; i < n; i++) v = [v]; return v; }\n"
        "function shared(n) { let v = [0]; for (let i = 0; i < n; i++) v = [v, v];"
        " for (let i = 0; i < 45; i++) v = [v]; return v; }\n"
        "function circular() { const v = new Map(); v.set('self', v); let w = v;"
        " for (let i = 0; i < 45; i++) w = { w }; return w; }\n"
    )
    calls = [("nest", "[3]"), ("nest", "[45]"), ("shared", "[60]"), ("circular", "[]")]
    pairs = await js_pair(sandbox, source.replace("LEAF", "1"), source.replace("LEAF", "2"), calls)
    for o, n in pairs:
        assert o.kind == n.kind == "return"
    assert [o.key() != n.key() for o, n in pairs] == [True, True, False, False]
    assert all("...#" in o.text for o, _ in pairs[1:])
