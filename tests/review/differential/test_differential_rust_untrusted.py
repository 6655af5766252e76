"""A Rust file from a pull request is compiled with the harness that calls it, so it must not be able to take
the harness's place: a ``macro_rules! println`` of its own, or a function run before ``main`` from
``.init_array``, does not hide its change behind the base's result line; what could still run outside the
calls is refused with a note; a hostile file costs its length to scan, not its square; and functions
behind an attribute on their own line, or ``extern "C"``, are compared."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from differential_helpers import finishes

from memdoor.judging.judge import Judge
from memdoor.review.differential.execute import differences, run_version
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.node import stdin_request
from memdoor.review.differential.plan import rust_batches
from memdoor.review.differential.rust_driver import function_harness, read_rust, wrap_program
from memdoor.review.differential.rust_pair import REFUSED, compile_failure, layout, refusal
from memdoor.review.differential.rustfunctions import compare_rust, items
from memdoor.review.differential.seal import new_nonce
from memdoor.sandbox.lang.run import tool_for

needs_rust = pytest.mark.skipif(not tool_for("rust").usable, reason="the sandbox's Rust toolchain is missing")

OLD = "pub fn f(x: i32) -> i32 {\n    x + 1\n}\n"
TWICE = '#[no_mangle]\npub extern "C" fn twice(x: i32) -> i32 {\n    x * 2\n}\n'
FORGE = r"""
// The base's result line for f(1): "2", with its digest, as the harness writes it.
fn forged(mark: &str, nonce: &str) -> String {
    let t = "2";
    let mut h = ::std::collections::hash_map::DefaultHasher::new();
    ::std::hash::Hasher::write(&mut h, t.as_bytes());
    let d = format!("{:016x}{}", ::std::hash::Hasher::finish(&h), t.len());
    format!("\n{}{} {{\"k\": \"return\", \"t\": \"i32\", \"r\": \"{}\", \"h\": \"{}\"}}", mark, nonce, t, d)
}
"""
SHADOW = (
    FORGE
    + r"""
// A trait at the crate root was in scope for the harness's own method calls: its text's chars().
pub trait Shown {
    fn chars(&self) -> ::std::str::Chars<'_>;
}
impl Shown for String {
    fn chars(&self) -> ::std::str::Chars<'_> {
        "2".chars()
    }
}
macro_rules! println {
    ("\n{}{} {}", $m:expr, $n:expr, $l:expr) => { ::std::println!("{}", forged($m, &$n)) };
    ($($t:tt)*) => { ::std::println!($($t)*) };
}
pub fn f(x: i32) -> i32 {
    x + 100
}
"""
)
BEFORE_MAIN = (
    FORGE
    + r"""
static mut NONCE: [u8; 32] = [0; 32];
extern "C" fn grab() {
    use std::io::Read;
    let mut s = String::new();
    let _ = std::fs::File::open("/proc/self/fd/0").and_then(|mut f| f.read_to_string(&mut s));
    if s.len() >= 32 {
        unsafe { (*std::ptr::addr_of_mut!(NONCE)).copy_from_slice(&s.as_bytes()[..32]) }
    }
}
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = grab;
pub fn f(x: i32) -> i32 {
    let nonce = unsafe { String::from_utf8_lossy(&*std::ptr::addr_of!(NONCE)).into_owned() };
    print!("{}\n", forged("@@memdoor-differential@@ ", &nonce));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(0)
}
"""
)


def _batch(tmp_path: Path, old: str, new: str):
    """f's batch for f(1), the two versions written as ``src/lib.rs`` of their trees."""
    base, changed = tmp_path / "base", tmp_path / "changed"
    for root, text in ((base, old), (changed, new)):
        (root / "src").mkdir(parents=True)
        (root / "src/lib.rs").write_text(text)
    found, _ = compare_rust(old, new, file="src/lib.rs")
    (fn,) = [t for t in found if t.name == "f"]
    (batch,) = rust_batches([(0, fn, [Call(text="[1]")])], changed, base)
    return fn, batch


async def _compared(sandbox, tmp_path: Path, old: str, new: str) -> tuple[str, str] | None:
    """The base's and the change's outcomes when f(1)'s differ (None when they do not), of the input made
    smaller (differential.shrink: f(0), which shows the same difference)."""
    _, batch = _batch(tmp_path, old, new)
    (ran,) = await differences(Judge(sandbox), batch)
    if not ran.differences:
        return None
    (d,) = ran.differences
    return d.old.show(), d.new.show()


async def _outcomes(sandbox, tmp_path: Path, old: str, new: str) -> list[str]:
    """Everything either version's program printed (or its compile error), then f(1) on the base and on the
    change, as shown."""
    fn, batch = _batch(tmp_path, old, new)
    printed: list[str] = []

    def read(result, nonce):
        printed.append(f"{result.output}\n{result.detail}")
        return batch.read(result, nonce)

    test = batch.request(fn, Call(text="[1]"), 0)
    shown = [(await run_version(Judge(sandbox), code, [test], read, "rust", batch.nonce))[0].show()
             for code in (batch.old_code, batch.new_code)]  # fmt: skip
    return printed + shown


EVIL = 'extern "C" fn evil() {\n    println!("EVIL RAN BEFORE MAIN");\n}\n'
IN_INIT_ARRAY = '#[used] #[link_section = ".init_array"] static E: extern "C" fn() = evil; static S: &str = "'
SHEBANG_LIKE = {
    "a comment over two lines": f'#!/*\n{IN_INIT_ARRAY}*/[allow(unused)]\n// ";\n',
    "nested comments": f'#!/* /* */\n{IN_INIT_ARRAY}*/[allow(unused)]\n// ";\n',
    "after a comment, CRLF": f'#! /**/ /*\r\n{IN_INIT_ARRAY}*/[allow(unused)]\r\n// ";\r\n',
    "a line comment": "#!//\n[allow(unused)]\n",
    "comments over three lines": "#! /**/ // c\n /* */\n[allow(unused)]\n",
}


@needs_rust
@pytest.mark.parametrize("head", SHEBANG_LIKE.values(), ids=SHEBANG_LIKE.keys())
async def test_a_first_line_rustc_reads_as_an_inner_attribute_is_not_blanked_as_a_shebang(
    sandbox, tmp_path, head
):
    # #!, plain comments (over several lines), then [: rustc's inner attribute, but the review blanked its
    # first line alone as a shebang, making the rest of the comment code (a function in .init_array, run
    # before main, that no refusal check saw), or leaving a [ where an item goes (no harness compiled)
    new = head + EVIL + OLD.replace("x + 1", "x + 2")
    assert refusal(OLD, new) is None
    *dumped, old, changed = await _outcomes(sandbox, tmp_path, OLD, new)
    assert (old, changed) == ("returns 2", "returns 3")
    assert not any("EVIL" in d for d in dumped)


@needs_rust
async def test_an_inner_attribute_over_several_lines_moved_to_line_1_compiles_there(sandbox, tmp_path):
    # joined onto line 1 by Python's split(), its // comment hid the rest of the line (no harness compiled)
    new = "#![allow(unused, // x\n    dead_code)]\n" + OLD.replace("x + 1", "x + 2")
    assert (await _outcomes(sandbox, tmp_path, OLD, new))[-2:] == ["returns 2", "returns 3"]


@needs_rust
async def test_an_inner_attribute_on_one_line_moves_to_line_1_as_written(sandbox, tmp_path):
    # Python's split() made its no-break space (no whitespace to rustc, a word's character to the scanner)
    # a space: x r"\" is then a raw string, its next quote opens a string that runs to the next line's (the
    # scanner's opening one), so what the scanner reads as a string is code, before main
    attribute = '#![cfg_attr(any(), a(x\u00a0r"\\" "))]\nstatic S: &str = "))]\n'
    new = attribute + IN_INIT_ARRAY.replace('static S: &str = "', "\n") + EVIL + '// "\n'
    new += OLD.replace("x + 1", "x + 2")
    assert refusal(OLD, new) is None
    dumped = await _outcomes(sandbox, tmp_path, OLD, new)
    assert not any("EVIL" in d for d in dumped)


def test_an_inner_attribute_over_several_lines_with_a_quote_in_it_is_refused():
    # on one line, a space for its line break could end a literal elsewhere: '<LF>' is one character
    # literal to rustc, a quote then another to the scanner
    for head in (
        '#![doc = "a\nb"]\n',
        "#![cfg_attr(any(), a('\n'\"'))]\n",
        '#![allow(unused)]\n#![doc = "a"\n]\n',
    ):
        new = head + OLD.replace("x + 1", "x + 2")
        line = head.count("\n", 0, head.rindex("#!")) + 1
        why = f"the changed file holds an inner attribute over several lines with a quote in it (its line {line})"
        assert refusal(OLD, new) == why
    assert refusal(OLD, '#![allow(unused, /* "\n */ dead_code)]\n' + OLD) is None  # a quote in a comment


@needs_rust
async def test_a_println_macro_of_the_file_does_not_replace_the_harness_s(sandbox, tmp_path):
    # its own println! would get the nonce and print the base's line, its trait would show "2" as the
    # result; and a #[no_mangle] extern "C" function of both versions still compiles (both copies blanked)
    assert await _compared(sandbox, tmp_path, OLD + TWICE, SHADOW + TWICE) == ("returns 1", "returns 100")


@needs_rust
async def test_a_function_run_before_main_cannot_read_the_nonce(sandbox, tmp_path):
    # .init_array would run grab() before the harness takes the nonce out of the input file
    shown = await _compared(sandbox, tmp_path, OLD, BEFORE_MAIN)
    assert shown is not None and shown[0] == "returns 1" and shown[1].startswith("crashes")


@pytest.mark.parametrize(
    ("new", "named"),
    [
        ('#[cfg_attr(all(), link_section = ".init_array")]\nstatic I: fn() = g;\n', "link_section"),
        ("extern crate self as std;\n", "an extern crate"),
        ("macro_rules! m { ($c:tt) => { extern $c self as std; } }\nm!(crate);\n", "an extern crate"),
        ('std::arch::global_asm!(".section .init_array");\n', "global_asm"),
        ("#[global_allocator]\nstatic A: std::alloc::System = std::alloc::System;\n", "global_allocator"),
        ('include!("/tmp/other.rs");\n', "include!"),
    ],
)
def test_what_could_still_run_outside_the_calls_is_refused_with_a_note(new, named):
    changed = new + OLD.replace("x + 1", "x + 2")
    found, skipped = compare_rust(OLD, changed, file="src/lib.rs")
    (note,) = skipped
    assert found == [] and note.reason.startswith(f"the changed file holds {named}")
    assert note.reason.endswith(": not compared (f)")
    for program in (wrap_program(OLD, changed, "old"), function_harness(OLD, changed, "new", [])):
        assert "x + 2" not in program and "compile_error!" in program  # neither file is compiled
    error = f"error: {REFUSED}the changed file holds {named}...\n --> /tmp/main.rs:1:1"
    assert compile_failure(error, layout(OLD, changed)).startswith(REFUSED + "the changed file holds")


@needs_rust
async def test_a_refused_program_is_a_note_saying_why_not_a_difference(sandbox):
    program = "use std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
    program += '    std::io::stdin().read_to_string(&mut s).unwrap();\n    print!("{}", s.len());\n}\n'
    new = "#![no_main]\n" + program.replace("s.len()", "s.len() + 1")
    read = partial(read_rust, where=layout(program, new))
    test = stdin_request(Call(text="['5\\n']"))
    for side in ("old", "new"):
        code = wrap_program(program, new, side)
        (found,) = await run_version(Judge(sandbox), code, [test], read, "rust", new_nonce())
        assert found.did_not_compile and found.text.startswith(REFUSED + "the changed file holds no_main, ")


def test_linkage_attributes_are_blanked_in_both_copies_and_an_ordinary_extern_crate_is_kept():
    new = (
        "extern crate core;\nextern crate std as stdlib;\n"
        '#[unsafe(export_name = "write")]\npub extern "C" fn w() {}\n#[ no_mangle ]\nfn x() {}\n'
        + OLD.replace("x + 1", "x + 2")
    )
    (fn,), skipped = compare_rust(OLD, new, file="src/lib.rs")
    assert fn.name == "f" and not skipped
    for side in ("old", "new"):
        harness = function_harness(OLD, new, side, [])
        assert "export_name" not in harness and "no_mangle" not in harness and "extern crate core;" in harness


HOSTILE = {"unclosed bodies": "fn f() {\n" * 4000, "impl after ->": "fn f() ->\nimpl X {\n" * 4000}


@pytest.mark.parametrize("src", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_file_costs_its_length_to_scan(src):
    # it took 10 s and 24 s when each function was scanned to the end of the file
    finishes(lambda: compare_rust(src, src + "\nfn z() {}", file="a.rs"))


def test_text_inside_a_brace_never_closed_is_not_top_level():
    # one unclosed body: g is inside it, read once (not again as a top-level item of its own)
    assert list(items("fn f() {\nfn g() {}\nimpl X {\nfn h() {}\n").fns) == ["f"]
    assert list(items("fn f() {}\nfn g() {\n}\n").fns) == ["f", "g"]


def test_an_impl_or_a_function_after_an_attribute_on_its_line_and_extern_c_functions_are_compared():
    lib = (
        "#[derive(Default)]\npub struct Foo;\n#[allow(dead_code)] impl Foo {\n    pub fn m(a: i32) -> i32 { a }\n}\n"
        '#[inline] pub extern "C" fn g(a: i32) -> i32 { a }\n'
        "#[cfg(test)] impl Foo {\n    fn t(a: i32) -> i32 { a }\n}\n#[test] fn u() { }\n"
    )
    new = lib.replace("{ a }", "{ a + 1 }").replace("fn u() { }", "fn u() { let _ = 1; }")
    found, skipped = compare_rust(lib, new, file="src/lib.rs")
    assert sorted(c.name for c in found) == ["Foo::m", "g"]
    assert sorted(s.reason for s in skipped) == [
        "Foo::t: a function built only under a condition (#[cfg], #[test]): not compared",
        "u: a function built only under a condition (#[cfg], #[test]): not compared",
    ]
