"""Methods of JavaScript classes in the differential stage: a changed method of a top-level class is a
target named ``X.method``, an instance method called on ``new X()``, a static one on ``X``; a constructor
that throws is a note, not a difference; getters, setters and private methods are skipped with a note; the
scanner stays linear on hostile input."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential_helpers import finishes, review_change
from review_helpers import git, make_repo

from memdoor.review.differential.jsfunctions import compare_javascript
from memdoor.review.differential.json_inputs import mined_calls
from memdoor.sandbox.lang.run import tool_for

RANGE = """// integer ranges
class Range {
  constructor() {
    this.lo = 0;
    this.hi = 10;
  }

  clamp(x) {
    if (x < this.lo) return this.lo;
    if (x > this.hi) return this.hi;
    return x;
  }

  static span(a, b) {
    return Math.abs(b - a) + 1;
  }

  get size() {
    return this.hi - this.lo;
  }

  #check(x) {
    return x >= this.lo;
  }
}

module.exports = { Range };
"""
CLAMP_BROKEN = RANGE.replace("if (x > this.hi) return this.hi;", "if (x > this.hi) return this.hi - 1;")
CLAMP_REFACTORED = RANGE.replace(
    "    if (x > this.hi) return this.hi;\n    return x;\n", "    return x > this.hi ? this.hi : x;\n"
)
SPAN_BROKEN = RANGE.replace("Math.abs(b - a) + 1", "b - a + 1")
needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")


def test_changed_methods_of_a_top_level_class_are_targets_named_by_their_class():
    new = RANGE.replace("this.hi - this.lo", "this.hi - this.lo + 1").replace("x >= this.lo", "x > this.lo")
    new = new.replace("Math.abs(b - a) + 1", "Math.abs(a - b) + 1").replace("return x;", "return +x;")
    found, skipped = compare_javascript(RANGE, new, file="lib/range.js")
    assert [(c.name, c.kind, c.params, c.changed_lines) for c in found] == [
        ("Range.clamp", "method", [("x", "")], [11]),
        ("Range.span", "staticmethod", [("a", ""), ("b", "")], [15]),
    ]
    assert [s.reason for s in skipped] == [
        "Range.get size: a getter: not compared",
        "Range.#check: a private method: not compared",
    ]
    shape = "const Shape = class extends Base {\n  static of(n) { return n }\n  area() { return 1 }\n};\n"
    changed = compare_javascript(shape, shape.replace("return n", "return n + 1"), file="s.js")[0]
    assert [(c.name, c.kind) for c in changed] == [("Shape.of", "staticmethod")]
    same = RANGE.replace("    return x;", "    return x; // same")
    assert compare_javascript(RANGE, same, file="a.js") == ([], [])


WIDE = """const LIMIT = 3;
const g = 1;
class Box {
  cap() { return LIMIT; }
  get full() { return LIMIT; }
  same() { return 0; }
}
const Shape = class {
  area() { return 1; }
  twin() { return Shape; }
};
function f() { return 1; }
function h() { return 2; }
"""


def test_a_method_that_reads_a_changed_value_is_a_target_after_the_functions_and_one_side_only_is_not():
    new = WIDE.replace("LIMIT = 3", "LIMIT = 4").replace("area() { return 1; }", "area() { return 2; }")
    new = new.replace("const g = 1;", "const g = () => 1;").replace(
        "function f() { return 1; }", "const f = 1;"
    )
    new = new.replace("function h() { return 2; }", "function h() { return 3; }\nfunction k() { return 4; }")
    new = new.replace("same() { return 0; }", "same() { return 0; }\n  added() { return LIMIT; }")
    found, skipped = compare_javascript(WIDE, new, file="w.js")
    assert [(c.name, c.kind, c.why) for c in found] == [
        ("h", "function", "its code changed"),
        ("Box.cap", "method", "it reads LIMIT, whose top-level value changed"),
        ("Shape.area", "method", "its code changed"),
    ]  # Shape.twin reads only its own class's name; g, f, k and Box.added are on one side as functions
    assert [s.reason for s in skipped] == ["Box.get full: a getter: not compared"]


def test_a_methods_calls_are_mined_on_any_object_and_a_static_ones_on_its_class():
    test = "const r = new Range();\nr.clamp(12);\nclamp(3);\nRange.span(1, 4);\nother.span(2, 2);\n"
    assert [c.text for c in mined_calls([test], "clamp", receiver="*")] == ["[12]"]
    assert [c.text for c in mined_calls([test], "span", receiver="Range")] == ["[1, 4]"]


def test_the_class_scanner_stays_linear_on_hostile_input():
    hostile = [
        "export default " * 8000 + "class A {}",
        "class A extends (" * 8000,
        "class A { " + "static " * 8000,
        "class A { " + "m() { " * 8000,
        "const X = class " * 8000,
        "async function x " * 8000,
    ]
    for text in hostile:
        finishes(lambda text=text: compare_javascript(text, text + " ", file="a.js"))


@pytest.fixture
def repo(tmp_path) -> Path:
    root = make_repo(tmp_path / "repo")
    (root / "lib").mkdir()
    (root / "lib/range.js").write_text(RANGE)
    (root / "test").mkdir()
    (root / "test/range.test.js").write_text(
        "const { Range } = require('../lib/range');\nRange.span(2, 5);\n"
    )
    git(root, "add", "lib", "test")
    git(root, "commit", "-qm", "range.js")
    return root


async def review(sandbox, root, new_text, tmp_path, answer="```json\n[[15], [3]]\n```"):
    return await review_change(sandbox, root, "lib/range.js", new_text, tmp_path, lambda m: answer)


@needs_node
async def test_an_instance_method_changed_where_no_test_looks_is_a_finding_named_x_method(
    sandbox, repo, tmp_path
):
    report, pool = await review(sandbox, repo, CLAMP_BROKEN, tmp_path)
    (fn,) = report.differential.functions
    assert (fn.name, fn.language, fn.outcome, fn.note) == ("Range.clamp", "javascript", "reported", None)
    (g,) = report.findings
    ce = g.counterexample
    assert g.severity == "high" and (g.file, g.line) == ("lib/range.js", 10)
    # the agent's 15, made smaller (differential.shrink)
    assert (ce.function, ce.input, ce.old, ce.new) == ("Range.clamp", "12", "returns 10", "returns 9")
    assert "Range.clamp(12) returns 10 before the change and returns 9 after it" in g.message
    prompt = pool.get("scripted:0").calls[0][-1]["content"]
    assert "Range.clamp" in prompt and "this.hi - 1" in prompt


@needs_node
async def test_a_refactored_method_is_no_finding(sandbox, repo, tmp_path):
    report, _ = await review(sandbox, repo, CLAMP_REFACTORED, tmp_path)
    (fn,) = report.differential.functions
    assert (fn.name, fn.outcome) == ("Range.clamp", "no difference") and fn.inputs > 5
    assert not report.findings


@needs_node
async def test_a_static_method_is_called_on_its_class_and_a_changed_getter_is_skipped_with_a_note(
    sandbox, repo, tmp_path
):
    getter_too = SPAN_BROKEN.replace("this.hi - this.lo", "this.hi - this.lo + 1")
    report, _ = await review(sandbox, repo, getter_too, tmp_path, answer="[]")
    (fn,) = report.differential.functions
    assert (fn.name, fn.outcome, fn.note) == ("Range.span", "reported", None)
    assert [(s.file, s.reason) for s in report.differential.skipped] == [
        ("lib/range.js", "Range.get size: a getter: not compared")
    ]
    assert fn.inputs_own > 5  # the base test's Range.span(2, 5) among them
    (g,) = report.findings
    assert g.counterexample.function == "Range.span"
    assert (g.counterexample.old, g.counterexample.new) == ("returns 2", "returns 0")


@needs_node
async def test_a_constructor_that_throws_is_a_note_not_a_difference(sandbox, repo, tmp_path):
    strict = RANGE.replace("  constructor() {\n", "  constructor(lo) {\n    if (lo === undefined) throw new TypeError('bounds required');\n")  # fmt: skip
    (repo / "lib/range.js").write_text(strict)
    git(repo, "commit", "-qam", "bounds required")
    report, _ = await review(sandbox, repo, strict.replace("return this.hi;", "return this.hi - 1;"),
                             tmp_path)  # fmt: skip
    (fn,) = report.differential.functions
    assert (fn.name, fn.outcome, fn.differing) == ("Range.clamp", "not run", 0)
    assert fn.note == (
        "it cannot be called in the sandbox on either version: TypeError: new Range() throws: bounds required"
    )
    assert not report.findings
