"""JavaScript and Rust candidates in the real sandbox: the official HumanEval-X rules, stdin tests, verdicts."""

from __future__ import annotations

import pytest

from memdoor.core.problem import TestCase
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang.run import run_program, tool_for

pytestmark = pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)

RS_PRE = "\nfn main(){ \n } \nuse rand::Rng;\nuse regex::Regex;\nuse md5;\n"
RS_TEST = (
    "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() { assert_eq!(f(1), 2); }\n}\n"
)
JS_TEST = "console.assert(f(1) === 2)"


def check(code: str) -> list[TestCase]:
    return [TestCase(kind="check", input=code)]


@pytest.fixture(scope="module")
def sb():
    with open_sandbox(SandboxConfig(timeout_s=2.0, prestart=False)) as s:
        yield s


@pytest.mark.parametrize(
    ("code", "status", "detail"),
    [
        ("const f = (a) => a + 1;", "passed", ""),
        ("const f = (a) => a + 2;", "wrong_answer", "Assertion failed"),
        (  # said so that a repair can act on it: print nothing
            "const f = (a) => { console.log('dbg'); return a + 1 };",
            "wrong_answer",
            "stdout not empty (the official rule fails any output: print nothing, remove every console.log",
        ),
        ("const f = (a) => { console.error('dbg'); return a + 1 };", "wrong_answer", "stderr not empty"),
        ("const f = (a) => { throw new Error('boom') };", "runtime_error", "boom"),
        # the official rule passes it (exit 0, nothing printed); here the test must run to its end (issue 41)
        ("const f = (a) => { process.exit(0) };", "runtime_error", "the test code never ran to its end"),
        ("const f = (a) => a +;", "runtime_error", "SyntaxError"),
        ("const f = (a) => { while (true) {} };", "time_limit", ""),
    ],
)
def test_javascript_official_rule(sb, code, status, detail):
    v = run_program(sb, "javascript", code, check(JS_TEST))
    assert v.status == status, v
    assert detail in v.tests[0].detail
    assert v.isolation == sb.name


@pytest.mark.parametrize(
    ("code", "status", "detail"),
    [
        ("fn f(a: i32) -> i32 { a + 1 }", "passed", ""),
        ("fn f(a: i32) -> i32 { a + 2 }", "wrong_answer", "FAILED"),
        ('fn f(a: i32) -> i32 { panic!("boom") }', "wrong_answer", "boom"),
        ("fn f(a: i32) -> i32 { a + }", "compile_error", "expected expression"),
        ("fn f(a: i32) -> String { a }", "compile_error", "mismatched types"),
        ("fn f(a: i32) -> i32 { std::process::exit(3) }", "runtime_error", "exit status 3"),
        ("fn f(a: i32) -> i32 { loop {} }", "time_limit", ""),
        # the crates HumanEval-X declares are there, prebuilt
        (
            'fn f(a: i32) -> i32 { let d = format!("{:x}", md5::compute(b"")); '
            'assert!(Regex::new("^d4").unwrap().is_match(&d)); let _r: u32 = rand::random(); '
            "rand::thread_rng().gen_range(0..2) * 0 + a + 1 }",
            "passed",
            "",
        ),
    ],
)
def test_rust_check_then_test(sb, code, status, detail):
    v = run_program(sb, "rust", RS_PRE + code, check(RS_TEST))
    assert v.status == status, v
    assert detail in v.tests[0].detail


def test_rust_tests_that_do_not_build_are_a_failure_not_a_compile_error(sb):
    # the binary checks (cargo check passes), the test module does not compile: cargo test fails
    v = run_program(sb, "rust", RS_PRE + "fn g(a: i32) -> i32 { a }", check(RS_TEST))
    assert v.status == "runtime_error"
    assert "tests do not" in v.tests[0].detail


def test_rust_compile_time_file_reads_see_only_the_sandbox(sb):
    secret = "/etc/shadow"
    code = f'const S: &str = include_str!("{secret}");\nfn f(a: i32) -> i32 {{ a + 1 + S.len() as i32 * 0 }}'
    v = run_program(sb, "rust", RS_PRE + code, check(RS_TEST))
    assert v.status == "compile_error"
    assert "couldn't read" in v.tests[0].detail or "No such file" in v.tests[0].detail


@pytest.mark.parametrize(
    ("language", "program"),
    [
        ("javascript", "const xs = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
         "console.log(xs[0] + xs[1]);"),
        ("rust", "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s)"
         ".unwrap(); let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); "
         "println!(\"{}\", v[0] + v[1]); }"),
    ],
)  # fmt: skip
def test_stdin_programs(sb, language, program):
    tests = [
        TestCase(kind="stdin", input="1 2\n", output="3"),
        TestCase(kind="stdin", input="20 22\n", output="42"),
        TestCase(kind="stdin", input="1 1\n", output="3"),
    ]
    v = run_program(sb, language, program, tests, stop_at_first_failure=False)
    assert [t.status for t in v.tests] == ["passed", "passed", "wrong_answer"]
    assert v.tests[1].output.strip() == "42"


def test_function_call_tests_in_javascript(sb):
    code = "const f = (a, b) => { console.log('noise'); return [a + b, {k: b}]; };"
    tests = [
        TestCase(kind="functional", input="1\n2", output='[3, {"k": 2}]'),
        TestCase(kind="functional", input="1\n1", output='[3, {"k": 2}]'),
        TestCase(kind="functional", input='"a"\n"b"', output=None),
    ]
    v = run_program(sb, "javascript", code, tests, func_name="f", stop_at_first_failure=False)
    assert [t.status for t in v.tests] == ["passed", "wrong_answer", "passed"]
    assert v.tests[2].output == '["ab",{"k":"b"}]'
    async_code = "const f = async (a) => { throw new Error('nope') };"
    v = run_program(sb, "javascript", async_code, tests[:1], func_name="f")
    assert v.status == "runtime_error" and "nope" in v.tests[0].detail


def test_function_call_tests_in_rust(sb):
    code = RS_PRE + (
        "fn f(xs: Vec<i32>, s: &str, k: f64, o: Option<String>) -> (Vec<i32>, String) {\n"
        '    (xs.iter().map(|x| x * 2).collect(), format!("{}{}{}", s, k, o.unwrap_or_default()))\n}\n'
        "fn g(xs: &[i64]) -> Vec<i64> { xs.iter().rev().cloned().collect() }\n"
    )
    tests = [
        TestCase(kind="functional", input='[1, 2]\n"a\\"b"\n1.5\n"z"', output=None),
        TestCase(kind="functional", input='[1, 2]\n"x"\n2\nnull', output=None),
    ]
    v = run_program(sb, "rust", code, tests, func_name="f", stop_at_first_failure=False)
    assert [t.output for t in v.tests] == ['([2, 4], "a\\"b1.5z")', '([2, 4], "x2")'], v
    gt = [
        TestCase(kind="functional", input="[1, 2, 3]", output="[3, 2, 1]"),
        TestCase(kind="functional", input="[1, 2, 3]", output="[1, 2, 3]"),
        TestCase(kind="functional", input='"not a list"', output="[]"),
    ]
    v = run_program(sb, "rust", code, gt, func_name="g", stop_at_first_failure=False)
    assert [t.status for t in v.tests] == ["passed", "wrong_answer", "runtime_error"], v
    assert "cannot pass" in v.tests[2].detail
