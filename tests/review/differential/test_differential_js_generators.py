"""JavaScript generators in the differential stage: a generator function or method's outcome is what it
yields (at most MAX_ITEMS items, then cut with a note), what it returns and what it throws, so a changed
generator shows its change; an instance method named as a static one of its class is ``X.prototype.m``,
the static one ``X.m``, each called as itself."""

from __future__ import annotations

import pytest

from memdoor.judging.judge import Judge
from memdoor.review.differential.execute import differences, run_version
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.jsfunctions import compare_javascript
from memdoor.review.differential.node import MAX_ITEMS, js_call_request, js_program, read_js
from memdoor.review.differential.targets import Batch
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")

OLD = """class Seq {
  *upTo(n) { for (let i = 0; i < n; i++) yield i; }
  static async *pairs(n) { for (let i = 0; i < n; i++) { await null; yield [i, i]; } return 'done'; }
}
function* evens(n) { for (let i = 0; i < n; i += 2) yield i; }
module.exports = { Seq, evens };
"""
NEW = (
    OLD.replace("i < n; i++) yield i;", "i <= n; i++) yield i;")
    .replace("yield [i, i]; } return 'done';", "yield [i, i + 1]; } return 'done';")
    .replace("i < n; i += 2", "i < n; i += 3")
)


def _run(sandbox, targets, calls):
    work = [(k, t, calls) for k, t in enumerate(targets)]
    files = "lib/seq.js"
    batch = Batch(
        "javascript", js_program({files: OLD}), js_program({files: NEW}), work,
        lambda t, c, _k: js_call_request(t.file, t.name, c, t.kind), read_js,
    )  # fmt: skip
    return differences(Judge(sandbox), batch)


@needs_node
async def test_a_changed_generator_shows_what_it_yields_before_and_after(sandbox):
    targets, skipped = compare_javascript(OLD, NEW, file="lib/seq.js")
    assert [(t.name, t.kind) for t in targets] == [
        ("evens", "function"),
        ("Seq.upTo", "method"),
        ("Seq.pairs", "staticmethod"),
    ] and skipped == []
    ran = await _run(sandbox, targets, [Call(text="[3]")])
    shown = [[(d.input.text, d.old.show(), d.new.show()) for d in r.differences] for r in ran]
    assert shown == [  # each input [3] made as small as still shows the difference (differential.shrink)
        [("[3]", "returns Generator [0, 2]", "returns Generator [0]")],
        [("[0]", "returns Generator []", "returns Generator [0]")],
        [
            (
                "[1]",
                'returns AsyncGenerator [[0, 0]] then returns "done"',
                'returns AsyncGenerator [[0, 1]] then returns "done"',
            )
        ],
    ]


ENDLESS = """class Count {
  *from(n) { while (true) yield n++; }
  *failing() { yield 1; throw new RangeError('no more'); }
}
"""


@needs_node
async def test_an_endless_generator_is_read_to_its_first_items_and_a_throw_says_what_came_before(sandbox):
    calls = [
        js_call_request("c.js", "Count.from", Call(text="[5]"), "method"),
        js_call_request("c.js", "Count.failing", Call(text="[]"), "method"),
    ]
    endless, failing = await run_version(
        Judge(sandbox), js_program({"c.js": ENDLESS}), calls, read_js, "javascript"
    )
    items = ", ".join(str(5 + k) for k in range(MAX_ITEMS))
    assert (endless.kind, endless.type) == ("return", "Generator")
    assert endless.text == f"Generator [{items}, ...] (its first {MAX_ITEMS} items)"
    assert failing.show() == "raises RangeError: no more (after yielding [1])"


BOTH = """class Scale {
  constructor() { this.k = 10; }
  of(a) { return a * this.k; }
  static of(a) { return a * 2; }
  other(a) { return a; }
}
"""


@needs_node
async def test_a_static_and_an_instance_method_of_one_name_are_two_targets_named_apart(sandbox):
    new = (
        BOTH.replace("a * this.k", "a * this.k + 1")
        .replace("a * 2", "a * 3")
        .replace("return a;", "return -a;")
    )
    targets, _ = compare_javascript(BOTH, new, file="s.js")
    assert [(t.name, t.kind) for t in targets] == [
        ("Scale.prototype.of", "method"),
        ("Scale.of", "staticmethod"),
        ("Scale.other", "method"),
    ]
    calls = [js_call_request("s.js", t.name, Call(text="[4]"), t.kind) for t in targets]
    found = await run_version(Judge(sandbox), js_program({"s.js": BOTH}), calls, read_js, "javascript")
    assert [o.show() for o in found] == ["returns 40", "returns 8", "returns 4"]
