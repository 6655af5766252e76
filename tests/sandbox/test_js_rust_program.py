"""The program graded for a JavaScript or Rust answer: an official completion (the body) follows the prompt;
a team's whole-function answer replaces the prompt's opened signature. Both graded in the real sandbox."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from memdoor.judging.programs import grade_many, program_for
from memdoor.problems.humaneval_x import data_file, load_humaneval_x
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang.program import defines, join
from memdoor.sandbox.lang.run import tool_for


def records(language):
    with gzip.open(data_file(language), "rt", encoding="utf-8") as f:
        return {r["task_id"]: r for r in map(json.loads, f)}


def whole_function(language: str, rec: dict) -> str:
    """The canonical solution as a chat model writes it: signature and body."""
    if language == "javascript":
        sig = re.findall(r"(?:const|function)\s+\w+[^\n]*\{\s*$", rec["prompt"], re.M)[-1]
        return sig + "\n" + rec["canonical_solution"]
    decl = rec["declaration"]
    return decl[decl.index("fn ") :] + rec["canonical_solution"]


def test_a_completion_follows_the_prompt_and_a_whole_function_replaces_its_signature():
    prefix = "/* doc */\nconst helper = (x) => x;\nconst f = (a) => {\n"
    assert join("javascript", prefix, "  return a;\n}", "f") == prefix + "\n  return a;\n}"
    whole = join("javascript", prefix, "function f(a) {\n  return helper(a);\n}", "f")
    assert "const f = (a) => {" not in whole and "const helper" in whole and whole.count("{") == 1
    assert not defines("javascript", "  return f(a - 1);\n}", "f")  # a recursive call is not a definition
    assert not defines("javascript", "  let f = 1\n  return f\n}", "f")  # nor a variable of the body (JS/106)
    rust = "\nfn main(){ \n } \nuse std::cmp::max;\nfn f(a: i32) -> i32{\n/* doc */\n"
    assert "fn f(a: i32) -> i32{" not in join("rust", rust, "fn f(a: i32) -> i32 { a }", "f")
    # an answer with its own main and imports replaces the prefix's (no duplicates for rustc to refuse)
    own = join("rust", rust, "use std::cmp::max;\nfn f(a: i32) -> i32 { max(a, 0) }\nfn main() {}", "f")
    assert own.count("use std::cmp::max;") == 1 and own.count("fn main") == 1


@pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)
def test_whole_function_answers_of_canonical_solutions_pass():
    jobs = []
    for language in ("javascript", "rust"):
        recs = records(language)
        for p in load_humaneval_x(language)[:12]:
            jobs.append((p, whole_function(language, recs[p.id])))
    with open_sandbox(SandboxConfig(workers=2, prestart=False)) as sb:
        verdicts = list(grade_many(jobs, sb, workers=2))
    failed = [
        (p.id, v.status, v.tests[0].detail[:200])
        for (p, _), v in zip(jobs, verdicts, strict=True)
        if not v.passed
    ]
    assert failed == []
    p, code = jobs[0]
    assert program_for(p, code).count("hasCloseElements = (numbers, threshold) => {") == 1
