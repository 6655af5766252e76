"""``rustscan.masked``, the one reading of Rust comments and literals (the grader's test module, the review's
differential): every valid literal is one, whatever its length, and an unterminated one runs to the end."""

from __future__ import annotations

import pytest

from memdoor.review.differential.rust_pair import pair
from memdoor.sandbox.lang import rust_report
from memdoor.sandbox.lang.rust_untrusted import refused
from memdoor.sandbox.lang.rustscan import masked


def test_a_unicode_escape_padded_with_underscores_is_one_character_literal():
    # '\u{1_0_F_F_F_F}' is valid Rust, longer than '\u{10FFFF}': read as a lifetime, its closing quote began
    # ',' and the '"' after that opened a string hiding the rest of the module, the other tests with it
    code = (
        "mod tests {\n    use super::*;\n"
        "    #[test]\n    fn a() { assert_eq!(f('\\u{1_0_F_F_F_F}','\"'), 1); }\n"
        "    #[test]\n    fn b() { assert_eq!(g(cr\"\\\"), h('\\u{0_0_0_0_2_7___}')); }\n"
        "    #[test]\n    fn c() { assert!(true); }\n}\n"
    )
    text = masked(code)
    for literal, blanked in [("'\\u{1_0_F_F_F_F}'", "'" + 15 * " " + "'"), ('cr"\\"', 'cr" "')]:
        at = code.index(literal)
        assert text[at : at + len(literal)] == blanked
    prepared, names = rust_report.prepare(code)
    assert [n.rsplit("_m", 1)[0] for n in names] == ["tests::a", "tests::b", "tests::c"]
    assert "::std::assert!(true)" in prepared


def test_an_unterminated_string_is_blanked_to_the_end():
    assert masked('f("ab{') == 'f("   '
    assert masked('f("ab\\') == 'f("   '
    assert masked('f(b"{}') == 'f(b"  '
    assert masked('x = ""; y = "{}"') == 'x = ""; y = "  "'  # closed strings keep their quotes


# A macro that compiles the tokens between its 3rd and 4th arguments: "a"r#"x" is the string "a" with the
# suffix r, a #, then the string "x" (rustc, edition 2021), never a raw string running to the "# after the code.
HIDDEN_BY_A_SUFFIX = (
    "macro_rules! hide { ($a:tt $b:tt $s:tt { $($code:tt)* } $t:tt $c:tt) => { $($code)* }; }\n"
    'hide!("a"r#"x" { #[used] #[link_section = ".init_array"] static TAKE: extern "C" fn() = evil; } "#" \'"\');\n'
    'extern "C" fn evil() { println!("ran before main"); }\nfn main() {}\n'
)


def test_code_after_a_suffixed_literal_is_code():
    why = refused(HIDDEN_BY_A_SUFFIX, linkage_blanked=False)
    assert why is not None and why.startswith("#[used]")
    text = masked(HIDDEN_BY_A_SUFFIX)
    assert '#[used] #[link_section = "           "] static TAKE' in text  # the review blanks these itself
    # with a space, r#"x" { ... } "# is a raw string, for rustc too: its contents are no code
    spaced = HIDDEN_BY_A_SUFFIX.replace('"a"r#', '"a" r#').replace('"#" \'"\'', '"#')
    assert refused(spaced, linkage_blanked=False) is None


@pytest.mark.parametrize(
    ("code", "text"),
    [  # each as rustc (edition 2021) reads it in a macro's tokens; f() is code
        ('"a"r#"x" f() "#"', '" "r#" " f() " "'),  # a string's suffix r, a #, then a string
        ('"a"x\u0301r#"x" f() "#"', '" "x\u0301r#" " f() " "'),  # a suffix with a combining mark
        ('\'a\'r"x\\" " f() ""', '\' \'r"    " f() ""'),  # a character literal's suffix
        ('b\'a\'br"x\\" " f() ""', 'b\' \'br"    " f() ""'),  # a byte's
        ('r#"a"#cr"x\\" " f() ""', 'r#" "#cr"    " f() ""'),  # a raw string's
        ('br"a"_r"x\\" " f() ""', 'br" "_r"    " f() ""'),
        ('1r"x\\" " f() ""', '1r"    " f() ""'),  # a number's
        ('\'r"x\\" " f() ""', '\'r"    " f() ""'),  # the lifetime 'r, then a string
        ('\'br"x\\" " f() ""', '\'br"    " f() ""'),
        ('\'r#r"x\\" " f() ""', '\'r#r"    " f() ""'),  # a raw lifetime
        ('r#r"x\\" " f() ""', 'r#r"    " f() ""'),  # a raw identifier
        ('\'b r"\\" f() ""', '\'b r" " f() ""'),  # an r of its own starts a raw string
    ],
)
def test_literals_end_where_rustc_ends_them(code, text):
    assert masked(code) == text


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ('#! "\nf() ""', '    \nf() ""'),  # a shebang line, which rustc drops
        ('\ufeff#!/x "\nf() ""', '       \nf() ""'),  # after a byte order mark
        ('#!/// "\nf() ""', '       \nf() ""'),  # a doc comment is no inner attribute
        ('#!//c "\n[allow(unused)] const A: &str = "a";', '#!     \n[allow(unused)] const A: &str = " ";'),
    ],
)
def test_a_shebang_line_is_no_code(code, text):
    assert masked(code) == text


def test_the_review_blanks_the_linkage_attributes_after_a_shebang_line():
    # rustc drops the first line, its quote too: what follows is code, which the review's harness blanks
    new = (
        '#! "\n#[used]\n#[link_section = ".init_array"]\nstatic E: extern "C" fn() = e;\n'
        'extern "C" fn e() {}\n// "\npub fn f() -> i32 { 1 }\n'
    )
    harness = pair("pub fn f() -> i32 { 1 }\n", new, "new")
    assert "#[used]" not in harness and "link_section" not in harness and "fn e() {}" in harness
