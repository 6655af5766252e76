"""An instance method's instance is compared after the call (issue 43): a ``push`` that returns nothing but
leaves its object's fields otherwise is a difference, shown with the instance before and after the call,
in JavaScript and in Python; a refactoring of it that leaves the same fields is none. The fields are
written sorted by name, an object that holds itself bounded; a function's outcome is written as before."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from differential_helpers import commit, review_change
from review_helpers import make_repo

from memdoor.core.problem import TestCase
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import CallOutcome, from_mark, outcome, program
from memdoor.review.differential.execute import run_version
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import js_call_request, js_program, read_js
from memdoor.sandbox.lang.run import tool_for

needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")

STACK_JS = """// a stack that counts its items
class Stack {
  constructor() {
    this.size = 0;
    this.items = [];
  }

  push(x) {
    if (x === undefined) return;
    this.items.push(x);
    this.size += 1;
  }
}

module.exports = { Stack };
"""
PUSH_JS_BROKEN = STACK_JS.replace(
    "    if (x === undefined) return;\n    this.items.push(x);\n    this.size += 1;\n",
    "    this.size += 1;\n    if (!x) return;\n    this.items.push(x);\n",
)
PUSH_JS_REFACTORED = STACK_JS.replace(
    "    if (x === undefined) return;\n    this.items.push(x);\n    this.size += 1;\n",
    "    if (x !== undefined) {\n      this.size++;\n      this.items = [...this.items, x];\n    }\n",
)
STACK_PY = '''class Stack:
    """A stack that counts its items."""

    def __init__(self):
        self.size = 0
        self.items = []

    def push(self, x):
        if x is None:
            return
        self.items.append(x)
        self.size += 1
'''
PUSH_PY_BROKEN = STACK_PY.replace(
    "        if x is None:\n            return\n        self.items.append(x)\n        self.size += 1\n",
    "        self.size += 1\n        if not x:\n            return\n        self.items.append(x)\n",
)
PUSH_PY_REFACTORED = STACK_PY.replace(
    "        if x is None:\n            return\n        self.items.append(x)\n        self.size += 1\n",
    "        if x is not None:\n            self.size += 1\n            self.items = self.items + [x]\n",
)


@dataclass(frozen=True)
class Case:
    """One language's stack: its file, the base, the agent's inputs, and what ``push(0)`` returns and
    leaves: the fields of a fresh instance, those after the base's call, those after the broken one's."""

    path: str
    base: str
    inputs: str
    returns: str
    fields: tuple[str, str, str]


CASES = {
    "javascript": Case(
        "lib/stack.js", STACK_JS, "```json\n[[0], [3]]\n```", "undefined",
        ('{"items": [], "size": 0}', '{"items": [0], "size": 1}', '{"items": [], "size": 1}'),
    ),
    "python": Case(
        "stack.py", STACK_PY, '```json\n[["0"], ["3"]]\n```', "None",
        ("{'items': [], 'size': 0}", "{'items': [0], 'size': 1}", "{'items': [], 'size': 1}"),
    ),
}  # fmt: skip


def js(*values):
    """A JavaScript case's parameters, skipped without node."""
    return pytest.param("javascript", *values, marks=needs_node)


def test_an_instance_s_state_is_compared_and_a_function_s_outcome_is_written_as_before():
    line = {"k": "return", "t": "undefined", "r": "undefined", "h": "0" * 32}
    plain = from_mark(line)
    assert set(plain.model_dump()) == {
        "kind", "type", "text", "message", "digest", "mutated", "mutated_digest"
    }  # fmt: skip
    assert plain.show() == "returns undefined"
    pushed = from_mark({**line, "s": '{"items": [0]}', "sh": "1" * 32, "sb": '{"items": []}'})
    other = from_mark({**line, "s": '{"items": []}', "sh": "2" * 32, "sb": '{"items": []}'})
    assert pushed.key() != other.key() and pushed.key() != plain.key()
    assert pushed.show() == 'returns undefined, and changes its instance from {"items": []} to {"items": [0]}'
    assert pushed.model_dump()["state_before"] == '{"items": []}'


@pytest.fixture
def repo(tmp_path, language) -> Path:
    """A repository holding the language's stack."""
    case = CASES[language]
    root = make_repo(tmp_path / "repo")
    commit(root, case.path, case.base)
    return root


async def review(sandbox, root, language, new_text, tmp_path):
    case = CASES[language]
    report, _ = await review_change(sandbox, root, case.path, new_text, tmp_path, lambda m: case.inputs)
    (fn,) = report.differential.functions
    return report, fn


@pytest.mark.parametrize(("language", "broken"), [js(PUSH_JS_BROKEN), ("python", PUSH_PY_BROKEN)])
async def test_a_push_that_leaves_a_field_otherwise_is_a_finding_with_the_instance_before_and_after(
    sandbox, repo, language, broken, tmp_path
):
    report, fn = await review(sandbox, repo, language, broken, tmp_path)
    assert (fn.name, fn.outcome) == ("Stack.push", "reported")
    (g,) = report.findings
    ce = g.counterexample
    case = CASES[language]
    fresh, old, new = case.fields
    assert (ce.function, ce.input) == ("Stack.push", "0")
    assert ce.old == f"returns {case.returns}, and changes its instance from {fresh} to {old}"
    assert ce.new == f"returns {case.returns}, and changes its instance from {fresh} to {new}"


async def outcomes(sandbox, language: str, text: str, arguments: list[str]) -> list[CallOutcome]:
    """Each call of ``Stack.push`` on a fresh instance, run by the driver carrying ``text``."""
    calls = [Call(text=a) for a in arguments]
    if language == "javascript":
        tests = [js_call_request("lib/stack.js", "Stack.push", c, "method") for c in calls]
        return await run_version(Judge(sandbox), js_program({"lib/stack.js": text}), tests, read_js, language)
    request = [json.dumps({"m": "stack", "f": "Stack.push", "c": "method", "a": c.text}) for c in calls]
    tests = [TestCase(kind="stdin", input=r, output=None) for r in request]
    return await run_version(Judge(sandbox), program({"stack.py": text}, [""]), tests, outcome)


@pytest.mark.parametrize(("language", "refactored"), [js(PUSH_JS_REFACTORED), ("python", PUSH_PY_REFACTORED)])
async def test_a_refactored_push_leaves_the_same_fields_and_is_no_finding(
    sandbox, repo, language, refactored, tmp_path
):
    arguments = ["[0]", "[3]", '["a"]', "[[1, 2]]"]
    old = await outcomes(sandbox, language, CASES[language].base, arguments)
    new = await outcomes(sandbox, language, refactored, arguments)
    assert [o.key() for o in old] == [n.key() for n in new]
    assert all(o.state is not None and o.state_before is not None for o in old)  # the instance is compared
    report, fn = await review(sandbox, repo, language, refactored, tmp_path)
    assert (fn.name, fn.outcome) == ("Stack.push", "no difference") and fn.inputs > 5
    assert not report.findings


HOLDS_ITSELF_JS = STACK_JS.replace("    this.items.push(x);\n", "    this.items.push(this, this.items);\n")
HOLDS_ITSELF_PY = STACK_PY.replace(
    "        self.items.append(x)\n",
    "        self.items += [self.items, self.items]\n        self.me = self\n",
)


@pytest.mark.parametrize(
    ("language", "text", "state"),
    [
        js(HOLDS_ITSELF_JS, '{"items": [[Circular], [Circular]], "size": 1}'),
        (
            "python",
            HOLDS_ITSELF_PY,
            "{'items': [[Circular], [Circular]], 'me': <stack.Stack object at 0x?>, 'size': 1}",
        ),
    ],
)
async def test_an_instance_that_holds_itself_is_written_bounded_with_its_fields_sorted(
    sandbox, language, text, state
):
    (found,) = await outcomes(sandbox, language, text, ["[1]"])
    assert found.kind == "return" and found.state == state
