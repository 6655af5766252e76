"""The JavaScript check harness's own code does not run on the program's built-ins: a program that replaces
``Array.prototype.map``, ``Map``, ``Set``, ``Object.defineProperty``, ``Number``, String methods, the array
iterator, or adds to ``Object.prototype`` what Node's ``fs.writeSync`` and ``vm.runInContext`` read from a
fresh ``{}`` (``errno``, ``lineOffset``) changes its own realm only: the harness took what it uses before any
program code ran. A correct answer doing so passes (as it does under the official rule, whose test does not
use what it replaced), a wrong one is still a wrong answer. Real sandbox (bwrap), real node."""

from __future__ import annotations

import gzip
import json
import subprocess

import pytest

from memdoor.core.problem import TestCase
from memdoor.judging.programs import grade
from memdoor.problems.humaneval_x import data_file, load_humaneval_x
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang.run import run_program, tool_for

pytestmark = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")


def _define(target: str, key: str, descriptor: str) -> str:
    return f"Object.defineProperty({target}, {key}, {{ {descriptor}, configurable: true }});\n"


THROWS = "function () { throw new Error('replaced by the program'); }"
# Code a program runs after its function (top level), each replacing what the harness's code used to take
# from the program's realm: JavaScript/0's test passes arrays of numbers, JavaScript/95's an object.
REPLACES = {
    "array_map": ("JavaScript/0", f"Array.prototype.map = {THROWS};\n"),
    "number": ("JavaScript/0", f"globalThis.Number = {THROWS};\n"),
    "string_methods_and_require": (
        "JavaScript/0",
        f"String.prototype.replace = String.prototype.startsWith = String.prototype.slice = {THROWS};\n"
        "const util = require('node:util');\n",
    ),
    # Node's fs.writeSync reads errno and error of a fresh {} after each write (the end line's, too).
    "object_prototype_errno": ("JavaScript/0", _define("Object.prototype", "'errno'", f"get: {THROWS}")),
    # vm.runInContext copies its options into a fresh {} and reads lineOffset, cachedData... from it.
    "object_prototype_line_offset": (
        "JavaScript/0",
        _define("Object.prototype", "'lineOffset'", "value: 'x'"),
    ),
    "object_define_property": ("JavaScript/95", f"Object.defineProperty = {THROWS};\n"),
    # A property descriptor inherits ``get``: the harness's { value, writable, ... } would be an invalid one.
    "object_prototype_get": ("JavaScript/95", _define("Object.prototype", "'get'", "value: function () {}")),
    "array_iterator": ("JavaScript/95", f"Array.prototype[Symbol.iterator] = {THROWS};\n"),
}
WRONG = {"JavaScript/0": "  return false;\n}\n", "JavaScript/95": "  return true;\n}\n"}


@pytest.fixture(scope="module")
def sb():
    with open_sandbox(SandboxConfig(timeout_s=20.0, prestart=False)) as s:
        yield s


@pytest.fixture(scope="module")
def humaneval_x() -> dict[str, tuple]:
    """Each problem with its record (prompt, canonical solution, test) from the stored data set."""
    problems = {p.id: p for p in load_humaneval_x("javascript")}
    with gzip.open(data_file("javascript"), "rt", encoding="utf-8") as f:
        records = {r["task_id"]: r for r in map(json.loads, f)}
    return {pid: (problems[pid], records[pid]) for pid in {pid for pid, _ in REPLACES.values()}}


def _official_passes(record: dict, completion: str, tmp_path) -> bool:
    """CodeGeeX's rule, literally: ``node test.js`` on prompt + completion + test, passed iff it prints nothing."""
    (tmp_path / "test.js").write_text(record["prompt"] + completion + "\n" + record["test"])
    done = subprocess.run(["node", "test.js"], cwd=tmp_path, capture_output=True, timeout=60)
    return not done.stdout and not done.stderr


@pytest.mark.parametrize("name", sorted(REPLACES))
def test_a_correct_answer_that_replaces_built_ins_its_test_does_not_use_passes(
    sb, humaneval_x, name, tmp_path
):
    pid, replaces = REPLACES[name]
    problem, record = humaneval_x[pid]
    completion = record["canonical_solution"] + replaces
    assert _official_passes(record, completion, tmp_path)
    v = grade(problem, completion, sb)
    assert v.status == "passed", v.tests[0].detail


@pytest.mark.parametrize("name", sorted(REPLACES))
def test_a_wrong_answer_that_replaces_them_is_still_wrong(sb, humaneval_x, name):
    pid, replaces = REPLACES[name]
    v = grade(humaneval_x[pid][0], WRONG[pid] + replaces, sb)
    assert v.status == "wrong_answer", v
    assert v.tests[0].detail.startswith("stderr not empty") and "Assertion failed" in v.tests[0].detail, v


def _check(sb, code: str, test: str):
    return run_program(sb, "javascript", code, [TestCase(kind="check", input=test)])


MAP_SET_TEST = "console.assert(f(new Map([['a', 1]]), new Set([2, 3])) === 6)\n"


@pytest.mark.parametrize(
    "replaces",
    [
        f"globalThis.Map = globalThis.Set = {THROWS};\n",
        f"Map.prototype.set = Set.prototype.add = {THROWS};\n",
    ],
    ids=["constructors", "set_and_add"],
)
def test_map_and_set_arguments_reach_a_program_that_replaced_map_and_set(sb, replaces):
    code = "const f = (m, s) => { let t = 0; m.forEach((v) => { t += v; }); s.forEach((v) => { t += v; }); return t; };\n"
    assert _check(sb, code + replaces, MAP_SET_TEST).status == "passed"
    wrong = _check(sb, code.replace("return t", "return t + 1") + replaces, MAP_SET_TEST)
    assert wrong.status == "wrong_answer", wrong


def test_an_assertion_message_is_written_whatever_the_program_replaced(sb):
    """The harness's console.assert formats the test's message without the program's array iterator."""
    code = f"const f = (a) => a + 1;\nArray.prototype[Symbol.iterator] = {THROWS};\n"
    v = _check(sb, code, "console.assert(f(1) === 3, 'f(1) is', f(1))\n")
    assert v.status == "wrong_answer", v
    assert "Assertion failed: f(1) is 2" in v.tests[0].detail


def test_what_a_getter_of_a_thrown_value_throws_does_not_reach_the_test(sb):
    """The test catches an error of its own realm, not the program's object a ``name`` getter threw."""
    code = (
        "const marker = { fromTheProgram: true };\n"
        "const f = () => { throw { get name() { throw marker; }, message: 'm' }; };\n"
    )
    test = (
        "let caught = null;\n"
        "try { f(); } catch (e) { caught = e; }\n"
        "console.assert(caught instanceof Error && caught.fromTheProgram === undefined)\n"
    )
    assert _check(sb, code, test).status == "passed"
