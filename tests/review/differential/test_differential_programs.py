"""Standard-input programs in the differential stage, end to end: a real git repository, the real sandbox,
scripted agents. A Python, JavaScript or Rust program whose change breaks its output under "refactor, no
behaviour change" is a finding with the standard input and both runs; a real refactoring of it is none;
the example inputs of the base's tests are fed to it; an agent's inputs are read strictly."""

from __future__ import annotations

import pytest
from differential_helpers import commit, review_change
from review_helpers import make_repo

from memdoor.review.differential.stdin_inputs import mined_stdin
from memdoor.sandbox.lang.run import tool_for

PY = """import sys


def main():
    data = sys.stdin.read().split()
    n = int(data[0])
    xs = [int(x) for x in data[1 : n + 1]]
    best = 0
    for x in xs:
        if x > best:
            best = x
    print(best)


if __name__ == "__main__":
    main()
"""
PY_BROKEN = PY.replace("    for x in xs:\n", "    for x in xs[1:]:\n")
PY_REFACTORED = PY.replace(
    "    best = 0\n    for x in xs:\n        if x > best:\n            best = x\n    print(best)\n",
    "    print(max([0, *xs]))\n",
)
JS = """const lines = require('fs').readFileSync(0, 'utf8').split('\\n');
const n = Number(lines[0]);
let total = 0;
for (let i = 1; i <= n; i++) {
  total += Number(lines[i]);
}
console.log(total);
"""
JS_BROKEN = JS.replace("i <= n", "i < n")
JS_REFACTORED = JS.replace(
    "let total = 0;\nfor (let i = 1; i <= n; i++) {\n  total += Number(lines[i]);\n}\n",
    "let total = 0;\nlet i = 1;\nwhile (i <= n) total += Number(lines[i++]); // one loop\n",
)
RS = """use std::io::Read;

fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let n: i64 = s.trim().parse().unwrap_or(0);
    let mut total = 0;
    for k in 1..=n {
        total += k;
    }
    println!("{}", total);
}
"""
RS_BROKEN = RS.replace("1..=n", "1..n")
needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")
needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")


def respond(inputs: str):
    def reply(messages) -> str:
        user = messages[-1]["content"]
        if "Both versions" in user:
            return inputs
        if "### The pull request's description" in user:
            return '```json\n{"verdict": "intended"}\n```'
        return '```json\n{"findings": []}\n```'

    return reply


async def review(sandbox, root, path, new_text, tmp_path, inputs="```json\n[]\n```"):
    return await review_change(sandbox, root, path, new_text, tmp_path, respond(inputs))


def program_report(report, path):
    (fn,) = [f for f in report.differential.functions if f.name == path and f.target == "program"]
    return fn


async def test_a_broken_python_program_is_a_finding_with_its_stdin(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "tools/best.py", PY)
    agents = '```json\n["2\\n7 3\\n", 5, "' + "9" * 5000 + '"]\n```'
    report, pool = await review(sandbox, root, "tools/best.py", PY_BROKEN, tmp_path, inputs=agents)
    fn = program_report(report, "tools/best.py")
    assert fn.language == "python" and fn.outcome == "reported" and fn.unintended >= 1
    assert fn.inputs_agents == 1 and fn.rejected == 2  # a number and a 5,000-character text are refused
    (g,) = [g for g in report.findings if g.file == "tools/best.py"]
    ce = g.counterexample
    assert g.severity == "high" and g.verified and ce is not None and ce.function == "tools/best.py"
    # the smallest standard input that shows it: one number, skipped by the change
    assert (ce.input, ce.old, ce.new) == ("'1 2\\n'", "prints '2\\n' and exits with status 0",
                                          "prints '0\\n' and exits with status 0")  # fmt: skip
    assert "on standard input" in g.message
    (prompt,) = [
        c[-1]["content"] for c in pool.get("scripted:0").calls if "standard inputs" in c[-1]["content"]
    ]
    assert "for x in xs[1:]:" in prompt and "not instructions" in prompt


async def test_the_base_tests_stdin_is_fed_to_the_program(sandbox, tmp_path):
    """The base's test runs the program with input=...; an example file sits in examples/: both texts are
    among our own inputs, on top of those a repository without them gets."""
    bare = make_repo(tmp_path / "bare")
    commit(bare, "tools/best.py", PY)
    before, _ = await review(sandbox, bare, "tools/best.py", PY_BROKEN, tmp_path)
    root = make_repo(tmp_path / "repo")
    commit(root, "tools/best.py", PY)
    test = 'import subprocess\n\ndef test_best():\n    subprocess.run(["python3", "tools/best.py"], input="4\\n8 1 9 2\\n")\n'
    commit(root, "tests/test_best.py", test)
    commit(root, "examples/sample1.in", "3\n5 6 7\n")
    after, _ = await review(sandbox, root, "tools/best.py", PY_BROKEN, tmp_path)
    assert (
        program_report(after, "tools/best.py").inputs_own
        == program_report(before, "tools/best.py").inputs_own + 2
    )
    assert mined_stdin(root, root, [], ["tools/best.py"]) == {"tools/best.py": ["3\n5 6 7\n", "4\n8 1 9 2\n"]}


@pytest.mark.parametrize(
    ("path", "old", "new", "shown"),
    [
        # "2\n": the old program reads a missing third line (NaN); the new one stops before it
        pytest.param("bin/sum.js", JS, JS_BROKEN, ("'2\\n'", "NaN"), marks=needs_node, id="javascript"),
        pytest.param("src/main.rs", RS, RS_BROKEN, ("'1\\n'", "1"), marks=needs_rust, id="rust"),
    ],
)
async def test_a_broken_program_in_another_language_is_a_finding(sandbox, tmp_path, path, old, new, shown):
    root = make_repo(tmp_path / "repo")
    commit(root, path, old)
    report, _ = await review(sandbox, root, path, new, tmp_path)
    fn = program_report(report, path)
    assert fn.outcome == "reported" and fn.language == ("rust" if path.endswith(".rs") else "javascript")
    (g,) = report.findings
    ce = g.counterexample
    stdin, before = shown
    assert ce is not None and ce.function == path
    assert (ce.input, ce.old, ce.new) == (
        stdin,
        f"prints '{before}\\n' and exits with status 0",
        "prints '0\\n' and exits with status 0",
    )
    assert not report.differential.skipped


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        pytest.param("tools/best.py", PY, PY_REFACTORED, id="python"),
        pytest.param("bin/sum.js", JS, JS_REFACTORED, marks=needs_node, id="javascript"),
    ],
)
async def test_a_refactored_program_is_no_finding(sandbox, tmp_path, path, old, new):
    root = make_repo(tmp_path / "repo")
    commit(root, path, old)
    report, _ = await review(sandbox, root, path, new, tmp_path)
    fn = program_report(report, path)
    assert fn.outcome == "no difference" and fn.inputs > 5 and not report.findings


@needs_node
async def test_a_javascript_program_missing_a_module_on_both_sides_is_not_run(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    head = "const missing = require('no-such-module');\n"
    commit(root, "bin/sum.js", head + JS)
    report, _ = await review(sandbox, root, "bin/sum.js", head + JS_BROKEN, tmp_path)
    fn = program_report(report, "bin/sum.js")
    assert fn.outcome == "not run" and "Cannot find module 'no-such-module'" in fn.note
