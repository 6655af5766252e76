"""JavaScript functions in the differential stage: the scanner finds top-level functions through strings,
template literals, comments and regular expressions; changed ones run on both versions through a Node
driver with JSON arguments (the base's tests' calls mined); a broken refactoring is a finding with its
input and both results, a real one is none."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential_helpers import review_change
from review_helpers import git, make_repo

from memdoor.review.differential.jsfunctions import compare_javascript, definitions
from memdoor.review.differential.json_inputs import mined_calls, read_json_answer
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.stdin_inputs import read_stdin_answer, stdin_of
from memdoor.sandbox.lang.run import tool_for

TRICKY = r"""#!/usr/bin/env node
const LIMIT = 3; // a } in a comment
const re = /[/}{]+/g;
/* function hidden() { } */
function pad(s, n = LIMIT) {
  const t = `${s} ${`${n}`} }`;
  return t.replace(re, '}') + "{";
}
export const twice = (x) => x * 2
const inc = x => x + 1;
async function later(x) { return x }
const named = function inner(y) { if (y) { return '}' } return LIMIT; };
class K { m() { return 1 } }
"""

STATS = """// statistics helpers
export function spread(xs) {
  if (xs.length === 0) return 0;
  let lo = xs[0], hi = xs[0];
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return hi - lo;
}

const label = (n) => (n > 9 ? 'big' : 'small');

module.exports = { spread, label };
"""
BROKEN = STATS.replace("for (const x of xs) {", "for (const x of xs.slice(0, -1)) {")
REFACTORED = STATS.replace(STATS[STATS.index("  let lo") : STATS.index("  return hi - lo;\n")], "").replace(
    "return hi - lo;", "return Math.max(...xs) - Math.min(...xs);"
)
needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")


def test_the_scanner_finds_top_level_functions_through_strings_templates_comments_and_regexes():
    toks, defs = definitions(TRICKY)
    assert {n for n, d in defs.items() if d.is_function} == {"pad", "twice", "inc", "later", "named"}
    assert defs["pad"].params == [("s", ""), ("n", "LIMIT")] and not defs["LIMIT"].is_function
    assert toks[defs["pad"].last].text == "}" and "hidden" not in {t.text for t in toks}


def test_a_comment_or_layout_change_is_no_change_and_a_constant_change_reaches_its_readers():
    reformatted = TRICKY.replace("x => x + 1;", "x =>  x + 1; // next").replace(
        "/* function", "/* a function"
    )
    assert compare_javascript(TRICKY, reformatted, file="a.js")[0] == []
    moved = compare_javascript(TRICKY, TRICKY.replace("const LIMIT = 3;", "const LIMIT = 4;"), file="a.js")[0]
    assert {c.name: c.why for c in moved} == {
        "pad": "it reads LIMIT, whose top-level value changed",
        "named": "it reads LIMIT, whose top-level value changed",
    }
    (changed,) = compare_javascript(STATS, BROKEN, file="lib/stats.js")[0]
    assert (changed.name, changed.line, changed.changed_lines, changed.params) == (
        "spread",
        2,
        [5],
        [("xs", "")],
    )


def test_calls_in_the_base_tests_are_read_as_literals_only():
    test = "const { spread } = require('../lib/stats');\nassert.equal(spread([4, -8, 1.5]), 12);\n"
    test += "spread(xs); spread({a: 'b', \"c\": [true, null]}, `t`); obj.spread([9]); spread(f(1));\n"
    assert [c.text for c in mined_calls([test], "spread")] == [
        "[[4, -8, 1.5]]",
        '[{"a": "b", "c": [true, null]}, "t"]',
    ]


def test_an_agents_json_arguments_are_read_strictly():
    text = 'Here:\n```json\n[[[1, 2]], [[]], "x", [' + "1, " * 600 + "1]]\n```"
    read = read_json_answer(text, "a0", 8)
    assert [c.text for c in read.calls] == ["[[1, 2]]", "[[]]"] and len(read.rejected) == 2
    assert read_json_answer("no inputs here", "a0", 8).unreadable


def test_an_agents_standard_inputs_are_a_json_list_of_strings():
    read = read_stdin_answer('```json\n["3\\n1 2 3\\n", 7, ["x"], "3\\n1 2 3\\n", ""]\n```', "a0", 8)
    assert [stdin_of(c) for c in read.calls] == ["3\n1 2 3\n", ""] and len(read.rejected) == 2
    assert read_stdin_answer('{"inputs": "x"}', "a0", 8).unreadable


def test_which_files_are_standard_input_programs():
    lib = "def f(x):\n    return x\n"
    assert program_of("lib.py", lib, lib.replace("x\n", "x + 1\n")) is None  # no module-level code
    script = "n = int(input())\nprint(n)\n"
    assert program_of("run.py", script, script.replace("n)", "n + 1)")).target == "program"
    assert program_of("tests/test_run.py", script, script + "\n") is None
    js = "const t = require('fs').readFileSync(0, 'utf8');\nconsole.log(t.length);\n"
    assert program_of("a.js", js, js.replace("length", "length + 1")).language == "javascript"
    assert program_of("a.js", js, js.replace(";\n", "; // same\n")) is None  # a comment only
    rs = "mod util;\nfn main() { let s = std::io::stdin(); }\n"
    assert "several files" in program_of("src/main.rs", rs, rs.replace("s =", "t =")).reason


def test_a_file_with_es_module_imports_is_listed_as_skipped(tmp_path):
    from memdoor.review.diff import FileDiff, Hunk
    from memdoor.review.differential.kinds import find_targets

    for side, text in (("base", STATS), ("head", BROKEN)):
        (tmp_path / side / "lib").mkdir(parents=True)
        (tmp_path / side / "lib/stats.js").write_text("import { sum } from './sum.js';\n" + text)
    hunk = Hunk(old_start=5, old_len=1, new_start=5, new_len=1, lines=["-a", "+b"])
    f = FileDiff(path="lib/stats.js", old_path="lib/stats.js", hunks=[hunk])
    _, others, skipped = find_targets([f], tmp_path / "head", tmp_path / "base", 20)
    assert not others
    assert [(s.file, s.reason) for s in skipped] == [
        ("lib/stats.js", "ES module imports: functions not callable (spread)")
    ]


async def review(sandbox, root, new_text, tmp_path):
    answer = "```json\n[[[5, 1, 9]], [[2]]]\n```"
    return await review_change(sandbox, root, "lib/stats.js", new_text, tmp_path, lambda m: answer)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = make_repo(tmp_path / "repo")
    (root / "lib").mkdir()
    (root / "lib/stats.js").write_text(STATS)
    (root / "test").mkdir()
    (root / "test/stats.test.js").write_text("const { spread } = require('../lib/stats');\nspread([7, 3]);\n")
    git(root, "add", "lib", "test")
    git(root, "commit", "-qm", "stats.js")
    return root


@needs_node
async def test_a_broken_javascript_function_is_a_finding(sandbox, repo, tmp_path):
    report, pool = await review(sandbox, repo, BROKEN, tmp_path)
    (fn,) = report.differential.functions
    assert (fn.name, fn.language, fn.outcome) == ("spread", "javascript", "reported")
    assert fn.inputs_agents == 2 and fn.inputs_own > 5
    (g,) = report.findings
    ce = g.counterexample
    assert g.severity == "high" and (g.file, g.line) == ("lib/stats.js", 5)
    # the call the base's test makes ([7, 3]) is the smallest input that shows it, made smaller still
    assert (ce.function, ce.input, ce.old, ce.new) == ("spread", "[0, 1]", "returns 1", "returns 0")
    prompt = pool.get("scripted:0").calls[0][-1]["content"]
    assert "```javascript" in prompt and "xs.slice(0, -1)" in prompt and "JSON value" in prompt


@needs_node
async def test_a_real_refactoring_of_a_javascript_function_is_no_finding(sandbox, repo, tmp_path):
    report, _ = await review(sandbox, repo, REFACTORED, tmp_path)
    (fn,) = report.differential.functions
    assert fn.outcome == "no difference" and fn.inputs > 5 and not report.findings


@needs_node
async def test_a_function_beside_a_default_export_and_re_exports_is_called(sandbox, repo, tmp_path):
    tail = (
        "export default { spread, label };\nexport * from './more.js';\nexport { x as y } from './more.js'\n"
    )
    base = STATS.replace("module.exports = { spread, label };\n", tail)
    (repo / "lib/stats.js").write_text(base)
    git(repo, "commit", "-qam", "default export")
    report, _ = await review(sandbox, repo, base.replace("for (const x of xs) {", "for (const x of xs.slice(0, -1)) {"),
                             tmp_path)  # fmt: skip
    (fn,) = report.differential.functions
    assert fn.outcome == "reported" and fn.note is None


def test_a_long_functions_excerpt_marks_its_gaps_as_javascript_comments():
    body = "".join(f"  const x{i} = {i};\n" for i in range(400))
    old = f"function big() {{\n{body}  return 0;\n}}\n"
    (changed,) = compare_javascript(old, old.replace("x200 = 200", "x200 = 201"), file="a.js")[0]
    _, new = changed.excerpts()
    gaps = [line for line in new.splitlines() if "…" in line]
    assert gaps and all(line.lstrip().startswith("// …") for line in gaps)
