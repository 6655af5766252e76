"""A wrong Rust answer cannot forge the grader's report (the tricks issue 43 found in the review's harness):
``extern crate self as std`` with exported macros standing in for ``::std::assert_eq!`` and ``::std::include!``,
``.init_array`` code, ``#[no_mangle]``, ``asm!``: refused, never compiled with the tests; a report written
by the answer itself (the test names read from its own binary, then ``exit(0)``): no completion line with
the run's secret. Honest answers keep their verdicts. Real sandbox and rustc; few builds (refused programs
are never compiled)."""

from __future__ import annotations

import gzip
import json

import pytest

from memdoor.core.problem import TestCase
from memdoor.judging.programs import grade, program_for
from memdoor.problems.humaneval_x import load_humaneval_x
from memdoor.sandbox.lang import rust_report
from memdoor.sandbox.lang.run import run_program, tool_for
from memdoor.sandbox.lang.rust_untrusted import refused

rust_only = pytest.mark.skipif(
    not tool_for("rust").usable, reason="the sandbox's Rust toolchain (scripts/install_rust.sh) is missing"
)

# Finds the test names in the running binary, writes libtest's report for them and exits 0.
FORGE = r"""
fn forge() {
    use std::io::Write;
    let bin = std::fs::read("/proc/self/exe").or_else(|_| std::fs::read("/tmp/bin")).unwrap_or_default();
    let pat = b"test_has_close_elements_m";
    let mut names: Vec<String> = Vec::new();
    for i in 0..bin.len().saturating_sub(pat.len() + 16) {
        let tail = &bin[i + pat.len()..i + pat.len() + 16];
        if &bin[i..i + pat.len()] == pat && tail.iter().all(|c| c.is_ascii_hexdigit()) {
            let n = format!("tests::test_has_close_elements_m{}", String::from_utf8_lossy(tail));
            if !names.contains(&n) { names.push(n); }
        }
    }
    let mut out = format!("\nrunning {} tests\n", names.len());
    for n in &names { out += &format!("test {} ... ok\n", n); }
    out += &format!("\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n", names.len());
    std::io::stdout().write_all(out.as_bytes()).unwrap();
    std::io::stdout().flush().unwrap();
    std::process::exit(0);
}
"""
# Wrong answers to Rust/0 (each passed before: a completion, or a whole answer replacing the prompt's lines).
FORGERIES = {
    "extern_crate_self_as_std": "use core::mem;\nextern crate self as std;\npub mod prelude { pub mod rust_2021 {} }\n"
    "#[macro_export]\nmacro_rules! assert_eq { ($($t:tt)*) => {}; }\n"
    "#[macro_export]\nmacro_rules! vec { ($($t:tt)*) => { 0 }; }\n"
    "#[macro_export]\nmacro_rules! include { ($p:literal) => { core::include!($p); }; }\n"
    "fn has_close_elements(numbers: i32, threshold: f32) -> bool { false }\nfn main() {}\n",
    "init_array_writes_the_report": '    true\n}\n#[used]\n#[link_section = ".init_array"]\n'
    'static EARLY: extern "C" fn() = early;\nextern "C" fn early() { forge() }\n' + FORGE,
    "writes_the_report_and_exits_0": "    forge();\n    true\n}\n" + FORGE,
    # the .init_array code again, in a macro's tokens after "a"r#"x": the string "a" with the suffix r, a #,
    # the string "x" (rustc), never a raw string up to the "# after the code; run before the harness's own,
    # it reads the secret too and writes the completion lines (this passed)
    "init_array_after_a_suffixed_literal": "    true\n}\n"
    "macro_rules! hide { ($a:tt $b:tt $s:tt { $($code:tt)* } $t:tt $c:tt) => { $($code)* }; }\n"
    'hide!("a"r#"x" { #[used] #[link_section = ".init_array.00001"] static EARLY: extern "C" fn() = early; } '
    '"#" \'"\');\nextern "C" fn early() { forge() }\n'
    + FORGE.replace(
        "    std::process::exit(0);",
        '    let secret = std::fs::read("/tmp/memdoor-secret").unwrap_or_default();\n'
        '    let hex: String = secret.iter().map(|b| format!("{:02x}", b)).collect();\n'
        '    for n in &names { eprint!("\\n{} {} ok\\n", hex, n); }\n'
        "    std::process::exit(0);",
    ),
}


@pytest.fixture(scope="module")
def rust0():
    return {p.id: p for p in load_humaneval_x("rust")}["Rust/0"]


@rust_only
@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_rust_report_fails(sandbox, rust0, name):
    v = grade(rust0, FORGERIES[name], sandbox)
    assert not v.passed, v
    detail = v.tests[0].detail
    if name == "writes_the_report_and_exits_0":  # libtest's lines are all there: only the secret is missing
        assert v.status == "runtime_error" and "completion line with the run's secret" in detail, v
    else:
        assert v.status == "compile_error" and detail.startswith("not compiled with the tests"), v


@pytest.mark.parametrize(
    ("snippet", "named"),
    [
        ("extern crate self as std;", "extern crate"),
        ("extern crate core as alloc;", "extern crate"),
        ('#[used]\n#[link_section = ".init_array"]\nstatic I: extern "C" fn() = f;', "#[used]"),
        ('#[cfg_attr(all(), link_section = ".init_array")]\nstatic I: u8 = 0;', "link_section"),
        ('#[no_mangle]\npub extern "C" fn write() {}', "#[no_mangle]"),
        ('#[unsafe(export_name = "exit")]\nfn e() {}', "export_name"),
        ('fn f() { unsafe { core::arch::asm!(".pushsection .init_array") } }', "asm"),
        ("use std::arch::{asm as a};", "asm"),
        ('std::arch::global_asm!("");', "global_asm"),
        ("#[global_allocator]\nstatic A: std::alloc::System = std::alloc::System;", "global_allocator"),
        ('include!("/tmp/main.rs");', "include!"),
    ],
)
def test_what_could_stand_in_for_the_harness_is_refused(snippet, named):
    why = refused("fn main() {}\n" + snippet, linkage_blanked=False)
    assert why is not None and named in why
    assert (
        refused(
            f"fn main() {{}}\n/* {snippet} */\nconst S: &str = {json.dumps(snippet)};\n",
            linkage_blanked=False,
        )
        is None
    )


def test_the_review_keeps_blanking_plain_linkage_attributes():
    """The review's copies blank ``#[used]``/``#[no_mangle]`` themselves: only other mentions refuse."""
    assert refused("#[no_mangle]\nfn f() {}\n#[used]\nstatic S: u8 = 0;\n", linkage_blanked=True) is None
    assert refused("extern crate rand;\nextern crate self as std;\n", linkage_blanked=True) is not None


def test_the_test_module_gets_its_completion_guard_and_the_harness():
    code = (
        "mod tests {\n    use super::*;\n    #[test]\n    fn a() {\n        #![allow(unused)]\n        assert!(f());\n    }\n"
        "    mod inner {\n        #[test]\n        fn b() -> Result<(), String> { Ok(()) }\n    }\n}\n"
    )
    prepared, names = rust_report.prepare(code)
    suffix = names[0].rsplit("_m", 1)[1]
    assert names == [f"tests::a_m{suffix}", f"tests::inner::b_m{suffix}"]
    guard = f"let _memdoor_done = crate::__memdoor_h_m{suffix}::Done"
    assert f'#![allow(unused)] {guard}("tests::a_m{suffix}");' in prepared  # after the inner attribute
    assert f'-> Result<(), String> {{ {guard}("tests::inner::b_m{suffix}"); Ok(()) }}' in prepared
    assert f"mod __memdoor_h_m{suffix} {{" in prepared and f'"/tmp/{rust_report.SECRET_FILE}"' in prepared


def test_only_completion_lines_with_the_run_s_secret_count_and_are_taken_out():
    secret, other = bytes(range(16)), bytes(16)
    err = (
        b"note\n"
        + b"\n"
        + secret.hex().encode()
        + b" tests::a ok\n"
        + b"\n"
        + other.hex().encode()
        + b" tests::b ok\nend\n"
    )
    rest, done = rust_report.completed(err, secret)
    assert done == {"tests::a"} and rest == b"note\n\n" + other.hex().encode() + b" tests::b ok\nend\n"
    assert rust_report.unfinished(["tests::a"], done) is None
    assert "tests::b never wrote its completion line" in rust_report.unfinished(
        ["tests::a", "tests::b"], done
    )


@pytest.fixture(scope="module")
def canonical(shared_data):
    path = shared_data / "humaneval_x" / "humaneval_rust.jsonl.gz"
    if not path.exists():
        pytest.skip(f"HumanEval-X Rust not found at {path}")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        solutions = {r["task_id"]: r["canonical_solution"] for r in map(json.loads, f)}
    return {p.id: (p, solutions[p.id]) for p in load_humaneval_x("rust", keep_bad=True)}


def test_no_canonical_solution_is_refused(canonical):
    refusals = {
        pid: refused(program_for(p, code), linkage_blanked=False) for pid, (p, code) in canonical.items()
    }
    assert {pid: why for pid, why in refusals.items() if why} == {}


@rust_only
@pytest.mark.parametrize("pid", ["Rust/0", "Rust/38", "Rust/111"])  # plain, rand, HashMap
def test_honest_rust_answers_keep_passing(sandbox, canonical, pid):
    problem, code = canonical[pid]
    assert grade(problem, code, sandbox).passed


@rust_only
def test_a_wrong_answer_is_still_a_wrong_answer_and_tests_of_every_shape_still_pass(sandbox, canonical):
    problem, _ = canonical["Rust/0"]
    assert grade(problem, "    false\n}\n", sandbox).status == "wrong_answer"
    test = (
        "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn early() {\n        #![allow(unused)]\n"
        "        if twice(2) == 4 { return; }\n        panic!();\n    }\n    mod inner {\n        use super::*;\n"
        "        #[test]\n        fn result() -> Result<(), String> { assert_eq!(twice(3), 6); Ok(()) }\n    }\n}\n"
    )
    v = run_program(
        sandbox,
        "rust",
        "fn twice(x: i32) -> i32 { 2 * x }\nfn main() {}\n",
        [TestCase(kind="check", input=test)],
    )
    assert v.passed, v
