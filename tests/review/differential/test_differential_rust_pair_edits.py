"""How the Rust pair places a file in its harnesses: rewrites of a file that overlap are an error, and the
pair a note saying so (never a harness missing one of them); the refusal check is worked out once per pair;
the inputs' literals are the grader's literals with every path absolute."""

from __future__ import annotations

import pytest

from memdoor.review.differential import rust_pair
from memdoor.review.differential.rust_driver import function_harness, wrap_program
from memdoor.review.differential.rust_inputs import ABSOLUTE, literal
from memdoor.review.differential.rust_pair import (
    OTHER,
    REFUSED,
    OverlappingEdits,
    _edit,
    compile_failure,
    layout,
    pair,
    refusal,
)
from memdoor.review.differential.rustfunctions import compare_rust
from memdoor.sandbox.lang import rust_call

OLD = "pub fn f(x: i32) -> i32 {\n    x + 1\n}\n"
CHANGED = OLD.replace("x + 1", "x + 2")


def test_an_edit_that_overlaps_an_earlier_one_is_an_error_not_left_out():
    assert _edit("abcdef", [(4, 5, "E"), (0, 2, "AB")]) == "ABcdEf"
    with pytest.raises(OverlappingEdits, match=r"overlap \(its line 2\)"):
        _edit("ab\ncdef", [(0, 5, "....."), (4, 6, "XX")])


OVERLAPPING = {
    # the inner attribute's edit runs to the end of the file, over the renaming of fn main (in the root)
    "an inner attribute never closed": ("#![allow(dead_code\nfn main() {}\n", "its line 2"),
    # blanking #[macro_export(...)] and rewriting the crate:: inside it (in the module)
    "crate:: inside #[macro_export]": (
        "#[macro_export(crate::m)]\nmacro_rules! m { () => {} }\n",
        "its line 1",
    ),
    # a linkage attribute inside an inner attribute, both blanked (in the root)
    "#[used] inside #![...]": ("#![cfg_attr(all(), doc = 1,\n#[used])]\n", "its line 2"),
}


@pytest.mark.parametrize(("head", "line"), OVERLAPPING.values(), ids=OVERLAPPING.keys())
def test_a_file_whose_rewrites_overlap_is_refused_with_a_note_in_both_harnesses(head, line):
    new = head + CHANGED
    with pytest.raises(OverlappingEdits):  # one of the two harnesses cannot place it
        [pair(OLD, new, side) for side in ("old", "new")]
    why = f"the changed file holds parts the harness rewrites that overlap ({line})"
    assert refusal(OLD, new) == why
    found, skipped = compare_rust(OLD, new, file="src/lib.rs")
    assert found == [] and [s.reason for s in skipped] == [f"{why}: not compared (f)"]
    for side in ("old", "new"):
        for program in (
            wrap_program(OLD, new, side),
            function_harness(OLD, new, side, [(0, "f", ["i32"], [1])]),
        ):
            assert program == rust_pair.refused_harness(why)  # neither file compiled, on both sides
    error = f"error: {REFUSED}{why}\n --> /tmp/main.rs:1:1"
    assert compile_failure(error, layout(OLD, new)) == REFUSED + why


def test_the_refusal_is_worked_out_once_per_pair(monkeypatch):
    checked: list[str] = []

    def counted(src: str, *, linkage_blanked: bool) -> str | None:
        checked.append(src)
        return None

    monkeypatch.setattr(rust_pair, "refused", counted)
    refusal.cache_clear()
    base, changed = OLD + "\n", CHANGED + "\n"  # a pair no other test checked
    (fn,), _ = compare_rust(base, changed, file="src/lib.rs")
    calls = [(0, fn.name, ["i32"], [1])]
    for side in ("old", "new"):
        wrap_program(base, changed, side)
        function_harness(base, changed, side, calls)
    assert sorted(checked) == sorted([base, changed])  # each file once, not once per harness
    refusal.cache_clear()


def test_the_inputs_literals_are_the_grader_s_with_every_path_absolute():
    value, t = [["a", None], ["b", 3]], "&mut [(String, Option<u8>)]"
    assert rust_call.literal(value, t) == (
        '&mut vec![(String::from("a"), None, ), (String::from("b"), Some((3u8)), )]'
    )  # the grader's, unchanged
    assert (
        literal(value, t)
        == rust_call.literal(value, t, ABSOLUTE)
        == (
            '&mut ::std::vec![(::std::string::String::from("a"), ::std::option::Option::None, ), '
            '(::std::string::String::from("b"), ::std::option::Option::Some((3u8)), )]'
        )
    )
    with pytest.raises(rust_call.Unsupported, match=r"does not fit &mut \["):
        literal([["c", 256]], t)


def test_a_linkage_attribute_does_not_keep_the_file_s_inner_attributes_from_moving_to_line_1():
    # they stayed in the root file's text, after the other file's module: "an inner attribute is not
    # permitted in this context", so the new side's harness never compiled
    lib = '#![allow(dead_code)]\n#[no_mangle]\npub extern "C" fn g() {}\n' + OLD
    new = lib.replace("x + 1", "x + 2")
    for side in ("old", "new"):
        first, rest = pair(lib, new, side).split("\n", 1)
        assert first == "#![allow(dead_code)]" and "no_mangle" not in rest
        # only the other file's copy keeps its own, at the start of its module, where one is allowed
        assert "#!" not in rest.replace(f"mod {OTHER} {{ #![allow(dead_code)]", "")
