"""Rust functions in the differential stage: free functions of simple parameter types are found through
comments, strings and character literals; every input is baked into one harness per version as Rust
literals of the declared types; a broken refactoring is a finding with its input and both results, a real
one is none; a generic function is listed as not compared; a function whose calls the harness cannot
compile runs alone, so the others are still compared."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from differential_helpers import review_change
from review_helpers import git, make_repo

from memdoor.core.verdict import TestResult
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.rust_inputs import values_of
from memdoor.review.differential.rustfunctions import compare_rust
from memdoor.sandbox.lang.run import tool_for

LIB = """//! helpers { a brace in a comment
const LIMIT: usize = 3;

/// The largest value minus the smallest.
pub fn spread(xs: &[i64]) -> i64 {
    if xs.is_empty() {
        return 0;
    }
    let mut lo = xs[0];
    let mut hi = xs[0];
    for &x in xs.iter() {
        if x < lo { lo = x; }
        if x > hi { hi = x; }
    }
    hi - lo
}

pub fn tag(s: &str) -> String {
    let open = "{";
    let close = '}';
    format!("{}{}{}", open, s, close)
}

fn first<T: Clone>(xs: &[T]) -> T { xs[0].clone() }

pub fn cap(n: usize) -> usize { n.min(LIMIT) }

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn t() { assert_eq!(spread(&[1, 5]), 4); }
}
"""
BROKEN = LIB.replace("for &x in xs.iter()", "for &x in xs[..xs.len() - 1].iter()")
REFACTORED = LIB.replace(LIB[LIB.index("    let mut lo") : LIB.index("    hi - lo\n")], "").replace(
    "    hi - lo\n", "    xs.iter().max().unwrap() - xs.iter().min().unwrap()\n"
)
EXTRA = """
pub fn low(n: u8) -> u8 { n / 2 }
pub fn head(xs: &[i64]) -> &i64 { &xs[0] }
pub struct Opaque(u8);
pub fn opaque(n: u8) -> Opaque { Opaque(n) }
"""
needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")


def test_changed_free_functions_are_found_and_generic_ones_skipped():
    new = BROKEN.replace("const LIMIT: usize = 3;", "const LIMIT: usize = 4;").replace(
        "xs[0].clone()", "xs[1].clone()"
    )
    found, skipped = compare_rust(LIB, new, file="src/lib.rs")
    assert [(c.name, c.why, c.params) for c in found] == [
        ("spread", "its code changed", [("xs", "&[i64]")]),
        ("cap", "it reads LIMIT, whose top-level value changed", [("n", "usize")]),
    ]
    assert found[0].changed_lines == [11] and found[0].literals == [1]
    assert [s.reason.split(":")[0] for s in skipped] == ["first"]
    comments_only = LIB.replace("/// The largest", "/// Now: the largest").replace("let open", "let  open")
    assert compare_rust(LIB, comments_only, file="src/lib.rs") == ([], [])


def test_a_changed_url_in_a_string_is_a_code_change_not_a_comment():
    lib = 'pub fn url(n: i32) -> String {\n    format!("http://a/x{}", n) // a comment\n}\n'
    (found,), _ = compare_rust(lib, lib.replace("a/x", "a/y"), file="src/lib.rs")
    assert found.literals == ["http://a/y{}", "http://a/x{}"]
    main = 'fn main() {\n    let s = std::io::stdin();\n    println!("http://a/x");\n}\n'
    program = program_of("src/main.rs", main, main.replace("a/x", "a/y"))
    assert program is not None and program.literals == ["http://a/y", "http://a/x"]
    js = "const t = require('fs').readFileSync(0, 'utf8');\nconsole.log('http://a/x' + t); /* 7 */\n"
    program = program_of("a.js", js, js.replace("a/x", "a/y"))
    assert program is not None and program.literals == ["http://a/y", "http://a/x"]


def test_a_constant_array_is_read_to_its_last_semicolon():
    lib = "const TABLE: [i64; 3] = [1, 2, 3];\n\npub fn pick(k: usize) -> i64 {\n    TABLE[k % 3]\n}\n"
    (found,), _ = compare_rust(lib, lib.replace("2, 3]", "2, 4]"), file="src/lib.rs")
    assert (found.name, found.why) == ("pick", "it reads TABLE, whose top-level value changed")


def test_functions_the_harness_cannot_call_are_skipped_with_the_reason():
    lib = (
        "pub async fn a(x: i32) -> i32 { x }\npub unsafe fn b(x: i32) -> i32 { x }\n"
        '#[cfg(feature = "f")]\n/// docs\npub fn c(x: i32) -> i32 { x }\n#[test]\nfn d() { }\n'
    )
    new = lib.replace("{ x }", "{ x + 1 }").replace("fn d() { }", "fn d() { let _ = 1; }")
    found, skipped = compare_rust(lib, new, file="src/lib.rs")
    assert not found and [s.reason for s in skipped] == [
        "a: an async or unsafe function: not compared",
        "b: an async or unsafe function: not compared",
        "c: a function built only under a condition (#[cfg], #[test]): not compared",
        "d: a function built only under a condition (#[cfg], #[test]): not compared",
    ]


def test_values_follow_the_declared_types():
    assert values_of("u8", [255, -3]) == [255, 254, 0, 1, 2, 10, 100]  # 256 and -3 do not fit u8
    assert values_of("String", ["\ud800", "ok"])[:2] == ["ok", ""]  # no Rust string holds a lone surrogate
    assert values_of("&[i64]", [1]) == [[], [1], [1, 0, 2], [0, 2, 1], [1, 1]]
    assert values_of("usize", [])[:6] == [0, 1, 2, 10, 100]  # no negative value for an unsigned type
    assert values_of("Option<bool>", []) == [None, True, False]


async def review(sandbox, root, new_text, tmp_path):
    answer = '```json\n[[[5, 1, 9]], [[2]], ["not a list"]]\n```'
    report, _ = await review_change(sandbox, root, "src/lib.rs", new_text, tmp_path, lambda m: answer)
    return report


def _repo(tmp_path: Path, lib: str) -> Path:
    """A repository whose one commit adds ``src/lib.rs`` with ``lib``."""
    root = make_repo(tmp_path / "repo")
    (root / "src").mkdir()
    (root / "src/lib.rs").write_text(lib)
    git(root, "add", "src")
    git(root, "commit", "-qm", "lib.rs")
    return root


@pytest.fixture
def repo(tmp_path) -> Path:
    return _repo(tmp_path, LIB)


@needs_rust
async def test_a_broken_rust_function_is_a_finding(sandbox, repo, tmp_path):
    report = await review(sandbox, repo, BROKEN, tmp_path)
    (fn,) = report.differential.functions
    assert (fn.name, fn.language, fn.outcome) == ("spread", "rust", "reported")
    assert fn.inputs_agents == 2 and fn.inputs_own == 5 and fn.rejected == 1  # ["not a list"] for &[i64]
    (g,) = report.findings
    ce = g.counterexample
    assert (g.file, g.line, g.severity) == ("src/lib.rs", 11, "high")
    # the last element is the largest: the change no longer sees it ([1, 0, 2], ours, and [5, 1, 9], the
    # agents', show it), made smaller still (differential.shrink)
    assert (ce.function, ce.input, ce.old, ce.new) == ("spread", "[0, 1]", "returns 1", "returns 0")


@needs_rust
async def test_a_real_refactoring_of_a_rust_function_is_no_finding(sandbox, repo, tmp_path):
    report = await review(sandbox, repo, REFACTORED, tmp_path)
    (fn,) = report.differential.functions
    assert fn.outcome == "no difference" and fn.inputs == 7 and not report.findings


@needs_rust
async def test_the_harness_reports_a_value_a_panic_and_an_input_it_cannot_write(sandbox):
    from memdoor.core.problem import TestCase
    from memdoor.judging.judge import Judge
    from memdoor.review.differential.execute import run_version
    from memdoor.review.differential.rust_driver import function_harness, read_rust_call
    from memdoor.review.differential.rust_pair import layout

    calls = [(0, "spread", ["&[i64]"], [[3, 1]]), (1, "cap", ["usize"], [7]), (2, "cap", ["usize"], [-1]),
             (3, "low", ["u8"], [256]), (4, "tag", ["&str"], ["\ud800"]), (5, "head", ["&[i64]"], [[4, 5]]),
             (6, "opaque", ["u8"], [255])]  # fmt: skip
    source = LIB.replace("n.min(LIMIT)", 'if n > 5 { panic!("too big: {}", n) } else { n }') + EXTRA
    tests = [TestCase(kind="stdin", input=str(k)) for k in range(len(calls))]
    harness = function_harness(LIB + EXTRA, source, "new", calls)
    read = partial(read_rust_call, where=layout(LIB + EXTRA, source))
    shown = [o.show() for o in await run_version(Judge(sandbox), harness, tests, read, "rust")]
    # an input that would not compile (256 for u8, a lone surrogate) is refused alone; a result that borrows
    # from its argument, or has no Debug text, is shown: every other call still runs
    assert shown == [
        "returns 2",
        "raises panic: too big: 7",
        "cannot be called (unsupported input: -1 does not fit usize)",
        "cannot be called (unsupported input: 256 does not fit u8)",
        'cannot be called (unsupported input: "\\ud800" does not fit &str)',
        "returns 4",
        "returns <main::Opaque without Debug>",
    ]


@needs_rust
async def test_a_change_that_does_not_compile_is_a_note_not_a_difference(sandbox, repo, tmp_path):
    new = BROKEN.replace("const LIMIT", "use no_such_crate::Thing;\nconst LIMIT")
    report = await review(sandbox, repo, new, tmp_path)
    (fn,) = report.differential.functions
    assert fn.outcome == "not run" and not report.findings
    assert "the changed file does not compile in the harness (its line 2): error[E0432]" in fn.note


TWO = """pub fn total(xs: &'static [i64]) -> i64 {
    xs.iter().sum()
}

pub fn double(n: i64) -> i64 {
    n * 2
}
"""
TWO_CHANGED = TWO.replace("xs.iter().sum()", "xs.iter().copied().sum()").replace("n * 2", "n + n + 1")


def _two_functions(tmp_path: Path) -> list:
    from memdoor.review.differential.plan import rust_batches

    base, changed = tmp_path / "base", tmp_path / "changed"
    for root, text in ((base, TWO), (changed, TWO_CHANGED)):
        (root / "src").mkdir(parents=True)
        (root / "src/lib.rs").write_text(text)
    found, _ = compare_rust(TWO, TWO_CHANGED, file="src/lib.rs")
    work = [(i, t, _calls_of(t)) for i, t in enumerate(found)]
    return rust_batches(work, changed, base)


def _calls_of(t) -> list:
    from memdoor.review.differential.inputs import Call

    return [Call(text="[[1, 2]]" if t.name == "total" else "[3]")]


def _read_call(result: TestResult, nonce: str = "0" * 32):
    from memdoor.review.differential.rust_driver import read_rust_call
    from memdoor.review.differential.rust_pair import layout

    return read_rust_call(result, nonce, layout(TWO, TWO_CHANGED))


def test_a_file_harness_that_does_not_compile_for_its_own_code_splits_per_function(tmp_path):
    (batch,) = _two_functions(tmp_path)
    own = _read_call(TestResult(status="compile_error", detail="error[E0716]\n --> src/main.rs:40:9"))
    file = _read_call(TestResult(status="compile_error", detail="error[E0308]\n --> src/main.rs:12:5"))
    assert own.text.startswith("the harness does not compile") and file.text.startswith("the changed file")
    assert batch.split is not None and batch.split([file, file]) == []
    parts = batch.split([own, own])
    assert [[t.name for _, t, _ in p.work] for p in parts] == [["total"], ["double"]]
    call = "double((3i64))"
    assert call in batch.new_code and call not in parts[0].new_code and call in parts[1].new_code
    assert all(p.split is None for p in parts)


@needs_rust
async def test_one_function_the_harness_cannot_call_does_not_stop_the_others(sandbox, tmp_path):
    root = _repo(tmp_path, TWO)
    answer = "```json\n[[3]]\n```"
    report, _ = await review_change(sandbox, root, "src/lib.rs", TWO_CHANGED, tmp_path, lambda m: answer)
    # a &'static slice cannot be written in the harness (its literal is a temporary): total keeps the note,
    # and double, compared in a harness of its own, shows its change
    total, double = sorted(report.differential.functions, key=lambda f: f.name != "total")
    assert total.outcome == "not run" and "the harness does not compile" in total.note
    assert double.outcome == "reported"
    (g,) = report.findings
    ce = g.counterexample
    assert (ce.function, ce.input, ce.old, ce.new) == ("double", "0", "returns 0", "returns 1")


def test_a_function_printing_that_the_harness_did_not_compile_does_not_split_it(tmp_path):
    """The split follows the sandbox's status, never a result line the code under test printed (and then
    ended the process, so that it is the last)."""
    from memdoor.review.differential.driver import MARK

    (batch,) = _two_functions(tmp_path)
    line = {"k": "import", "t": "compile error", "r": "the harness does not compile: error[E0716]"}
    forged = _read_call(TestResult(status="passed", output="\n" + MARK + json.dumps(line) + "\n"))
    assert batch.split is not None and batch.split([forged, forged]) == []


HALF = """pub fn half(x: f64) -> f64 {
    x / 2.0
}
"""
HALF_CHANGED = HALF.replace("x / 2.0", "x * 0.5 + 0.0")


HUGE = int("1" * 400)
"""An integer beyond f64: float() of it raises OverflowError."""


def test_a_number_beyond_f64_or_f32_is_refused_with_the_reason_and_f32_max_is_taken():
    from memdoor.review.differential.inputs import Call
    from memdoor.review.differential.rust_inputs import literal, takes
    from memdoor.sandbox.lang.rust_call import Unsupported

    (half,), _ = compare_rust(HALF, HALF_CHANGED, file="src/lib.rs")
    assert not takes(half, Call(text=f"[{HUGE}]")) and takes(half, Call(text="[1e308]"))
    for value, t in [(HUGE, "f64"), ([1.0, -HUGE], "Vec<f64>"), (HUGE, "Option<f64>"), (float("inf"), "f64"),
                     ([float("nan")], "&[f64]"), (3.402823567797337e38, "f32")]:  # fmt: skip
        with pytest.raises(Unsupported, match="does not fit"):
            literal(value, t)
    # how Rust prints f32::MAX: the literal rounds to it, not to infinity
    assert literal(3.4028235e38, "f32") == "(3.4028235e+38f32)"
    assert literal(-(2**127), "f64") == f"({-float(2**127)!r}f64)"


def test_numbers_of_the_changed_lines_beyond_f64_give_no_value():
    assert values_of("f64", [HUGE, float("inf"), float("nan"), 2.5, -HUGE])[:2] == [2.5, 0.0]
    digits = "1" * 5000  # more digits than Python converts to an int
    new = HALF.replace("x / 2.0", f"x / 2.0 + 0.0 * {digits} + 0.0 * {'9' * 400}.5 + 3.0")
    (found,), _ = compare_rust(HALF, new, file="src/lib.rs")
    assert found.literals == [2.0, 0.0, 3.0]


@needs_rust
async def test_an_agent_s_number_beyond_f64_is_refused_and_the_stage_still_compares(sandbox, tmp_path):
    root = _repo(tmp_path, HALF)
    answer = f"```json\n[[{HUGE}], [-0.0]]\n```"
    report, _ = await review_change(sandbox, root, "src/lib.rs", HALF_CHANGED, tmp_path, lambda m: answer)
    (fn,) = report.differential.functions
    assert fn.rejected == 1 and fn.outcome == "reported"  # -0.0 / 2.0 is -0.0, -0.0 * 0.5 + 0.0 is 0.0
    assert report.findings[0].counterexample.input == "-0.0"
