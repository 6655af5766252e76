"""``rustscan.masked``, the one reading of Rust comments and literals (the grader's test module, the review's
differential): every valid literal is one, whatever its length, and an unterminated one runs to the end."""

from __future__ import annotations

from memdoor.sandbox.lang import rust_report
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
