"""Hostile files in the differential stage: deep nesting never raises out of the scanners (the stage runs
them for every changed file), and a file that still cannot be read is listed as skipped with its reason
while the others are compared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from differential_helpers import finishes

from memdoor.review.diff import FileDiff, Hunk
from memdoor.review.differential import kinds
from memdoor.review.differential.jsscan import tokens
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.rust_inputs import simple
from memdoor.review.differential.rustfunctions import compare_rust

JS = "function f(x) {\n  return x + 1;\n}\n"
RS = "pub fn g(x: i32) -> i32 {\n    x + 1\n}\n"


def test_deeply_nested_templates_are_one_token_not_a_recursion_error():
    (t,) = tokens("`${" * 2000)
    assert t.kind == "template"
    nested = "x = `a${ `b${ {c: 1}.c }` }d`; y = 2;"
    assert [t.text for t in tokens(nested)][:3] == ["x", "=", "`a${ `b${ {c: 1}.c }` }d`"]


def test_a_type_nested_too_deep_is_not_simple():
    assert not simple("Vec<" * 3000 + "i32" + ">" * 3000)
    assert not simple("(" * 3000 + "i32" + ")" * 3000)
    assert simple("Vec<Option<(i32, &str)>>")


def _diff(path: str) -> FileDiff:
    hunk = Hunk(old_start=1, old_len=1, new_start=1, new_len=1, lines=["-a", "+b"])
    return FileDiff(path=path, old_path=path, hunks=[hunk])


def test_a_file_that_cannot_be_read_is_skipped_and_the_others_are_compared(tmp_path, monkeypatch):
    base, changed = tmp_path / "base", tmp_path / "changed"
    for root, plus in ((base, ""), (changed, " + 1")):
        root.mkdir()
        (root / "a.js").write_text(JS.replace("x + 1", "x + 1" + plus))
        (root / "b.rs").write_text(RS.replace("x + 1", "x + 1" + plus))
    real = kinds.compare_rust

    def hostile(old: str, new: str, *, file: str):
        if file == "b.rs":
            raise RecursionError("maximum recursion depth exceeded")
        return real(old, new, file=file)

    monkeypatch.setattr(kinds, "compare_rust", hostile)
    fns, others, skipped = kinds.find_targets([_diff("b.rs"), _diff("a.js")], changed, base, 20)
    assert [(t.file, t.name) for t in others] == [("a.js", "f")] and not fns
    assert [(s.file, s.reason) for s in skipped] == [("b.rs", "could not be read: RecursionError")]


def test_own_inputs_survive_a_test_file_that_cannot_be_read(tmp_path: Path, monkeypatch):
    (tmp_path / "test").mkdir()
    (tmp_path / "test/a.test.js").write_text("f(3);\n")
    (tmp_path / "test/b.test.js").write_text("f(4);\n")
    real = kinds.mined_calls

    def hostile(texts: list[str], name: str):
        if any("f(4)" in t for t in texts):
            raise RecursionError
        return real(texts, name)

    monkeypatch.setattr(kinds, "mined_calls", hostile)
    _, others, _ = kinds.find_targets([_diff("a.js")], *_trees(tmp_path), 20)
    (own,) = kinds.own_for(others, tmp_path, tmp_path / "base", [_diff("a.js")])
    assert own[0].text == "[3]"


def _trees(root: Path) -> tuple[Path, Path]:
    base = root / "base"
    base.mkdir()
    (base / "a.js").write_text(JS)
    (root / "a.js").write_text(JS.replace("x + 1", "x + 2"))
    return root, base


def test_a_template_nested_in_a_mined_test_file_does_not_stop_mining():
    from memdoor.review.differential.json_inputs import mined_calls

    test = "f([1, 2]);\nconst t = " + "`${" * 2000 + "\n"
    assert [c.text for c in mined_calls([test], "f")] == ["[[1, 2]]"]


PROGRAM = """use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    println!("{}", s.len());
}
"""


def test_a_rust_program_with_many_blank_lines_is_read_in_linear_time():
    pad = "\n" * 200_000
    old, new = PROGRAM + pad, PROGRAM.replace("s.len()", "s.len() + 1") + pad
    found = finishes(lambda: program_of("src/main.rs", old, new))
    assert found.target == "program" and found.changed_lines == [5] and found.literals == [1, "{}"]


def test_an_unterminated_block_comment_is_read_in_linear_time():
    new = PROGRAM + "/* " * 66_000
    assert finishes(lambda: program_of("src/main.rs", PROGRAM, new)) is None  # a comment only


def test_a_long_run_of_pub_paths_is_read_in_linear_time():
    hostile = "\n" + "pub(" * 50_000
    old, new = RS + hostile, RS.replace("x + 1", "x + 2") + hostile
    found, _ = finishes(lambda: compare_rust(old, new, file="src/lib.rs"))
    assert [f.name for f in found] == ["g"]


def test_many_unclosed_signatures_are_read_in_linear_time():
    hostile = "\nfn a(" * 30_000
    old, new = RS + hostile, RS.replace("x + 1", "x + 2") + hostile
    found, _ = finishes(lambda: compare_rust(old, new, file="src/lib.rs"))
    assert [f.name for f in found] == ["g"]


def test_a_long_python_import_line_is_read_in_linear_time():
    hostile = "from sys import " * 60_000  # 960 KB: the review reads files up to 1 MB
    assert finishes(lambda: program_of("run.py", hostile, hostile + "x")) is None  # it does not parse


def _compare(old: str, new: str) -> list[Any]:
    from memdoor.review.differential.functions import compare_files

    return compare_files(old, new, file="a.py", old_file="a.py", module="a", import_root="")


def test_a_python_function_of_many_blank_lines_is_compared_in_bounded_time():
    pad = "\n" * 30_000  # 8,000 took the line matcher about 10 s on the whole function
    old = "def f(x):\n" + pad + "    return x + 1\n"
    (found,) = finishes(lambda: _compare(old, old.replace("x + 1", "x + 2")))
    assert found.changed_lines == [30_002] and found.literals == [2, 1]


def test_a_python_function_changed_around_many_blank_lines_marks_what_lies_between():
    pad = "\n" * 30_000
    old = "def f(x):\n    y = x + 1\n" + pad + "    return y\n"
    new = "def f(x):\n    y = x + 2\n" + pad + "    return y * 3\n"
    (found,) = finishes(lambda: _compare(old, new))
    assert found.changed_lines == list(range(2, 30_004)) and found.literals == [2, 3, 1]
    old_part, new_part = finishes(lambda: found.excerpts(400))
    assert "x + 1" in old_part and "x + 2" in new_part


def test_many_repeated_lines_in_a_different_order_are_compared_in_bounded_time():
    from memdoor.review.differential.functions import changed_spans

    old, new = ["a", "b", "c"] * 666, ["c", "b", "a"] * 666  # 64 s in the line matcher
    o_idx, n_idx = finishes(lambda: changed_spans(old, new), seconds=10)
    assert o_idx == list(range(1998)) and n_idx == list(range(1998))
