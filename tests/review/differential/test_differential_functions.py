"""Which functions a change altered: syntax trees compared, layout and docstrings left out."""

from __future__ import annotations

import pytest

from memdoor.review.differential.functions import compare_files, is_test_file, module_name

OLD = '''LIMIT = 10


def spread(xs):
    """Largest minus smallest."""
    if not xs:
        return 0
    return max(xs) - min(xs)


def capped(x):
    return min(x, LIMIT)


def same(a, b=2, *rest, key=None, **kw):
    return a + b


class Box:
    def put(self, x):
        return [x]

    @staticmethod
    def size(items):
        return len(items)
'''


def changed(new: str):
    return {
        f.name: f for f in compare_files(OLD, new, file="m.py", old_file="m.py", module="m", import_root="")
    }


def test_a_changed_body_is_found_with_its_changed_lines_and_literals():
    new = OLD.replace("    return max(xs) - min(xs)", "    return max(xs) - min(xs) - 1")
    found = changed(new)
    assert list(found) == ["spread"]
    fn = found["spread"]
    assert fn.line == 4 and fn.changed_lines == [8] and fn.first_changed == (8, 8)
    assert 1 in fn.literals and fn.why == "its code changed"
    assert "- 1" in fn.new_source and "- 1" not in fn.old_source
    assert [p.name for p in fn.params] == ["xs"] and fn.signature == "spread(xs)"


def test_layout_comments_and_docstrings_are_not_changes():
    new = OLD.replace('    """Largest minus smallest."""', '    """The range."""  # reworded')
    new = new.replace("return a + b", "return (a\n            + b)  # split")
    assert changed(new) == {}


def test_a_changed_constant_brings_the_functions_that_read_it():
    found = changed(OLD.replace("LIMIT = 10", "LIMIT = 11"))
    assert list(found) == ["capped"]
    assert "LIMIT" in found["capped"].why and {10, 11} <= set(found["capped"].literals)


def test_methods_are_named_by_class_and_keep_their_kind():
    new = OLD.replace("return [x]", "return [x, x]").replace("return len(items)", "return len(items) + 0")
    found = changed(new)
    assert found["Box.put"].kind == "method" and [p.name for p in found["Box.put"].params] == ["x"]
    assert found["Box.size"].kind == "staticmethod"


def test_signature_keeps_defaults_and_kinds():
    fn = changed(OLD.replace("return a + b", "return a - b"))["same"]
    assert fn.signature == "same(a, b = 2, *rest, key = None, **kw)"
    assert [p.required for p in fn.params] == [True, False, False, False, False]


def test_added_and_removed_functions_are_not_compared():
    assert changed(OLD + "\n\ndef extra():\n    return 1\n") == {}


def test_a_file_that_does_not_parse_raises():
    with pytest.raises(SyntaxError):
        changed(OLD + "\ndef broken(:\n")


def test_module_names_follow_packages():
    files = {"src/pkg/__init__.py", "src/pkg/sub/__init__.py"}
    assert module_name("src/pkg/sub/mod.py", files.__contains__) == ("pkg.sub.mod", "src")
    assert module_name("src/pkg/__init__.py", files.__contains__) == ("pkg", "src")
    assert module_name("calc.py", files.__contains__) == ("calc", "")
    assert module_name("scripts/run-me.py", files.__contains__) is None
    assert module_name("README.md", files.__contains__) is None


def test_test_files_are_recognised():
    assert is_test_file("test_calc.py") and is_test_file("pkg/calc_test.py") and is_test_file("tests/x.py")
    assert is_test_file("conftest.py") and not is_test_file("calc.py") and not is_test_file("src/testing.py")


def test_a_long_function_is_shown_around_its_change():
    body = "".join(f"    x{i} = {i}\n" for i in range(400))
    old = f"def long(x):\n{body}    return x\n"
    (fn,) = compare_files(old, old.replace("return x", "return -x"), file="m.py", old_file="m.py",
                          module="m", import_root="")  # fmt: skip
    before, after = fn.excerpts(limit=2000)
    assert before.startswith("def long(x):") and after.startswith("def long(x):")
    assert "return -x" in after and "return x" in before and "x390 = 390" in after
    assert "x5 = 5" not in after and "lines left out" in after and len(after) <= 1100
    short_old, short_new = changed(OLD.replace("return a + b", "return a - b"))["same"].excerpts()
    assert "a - b" in short_new and "a + b" in short_old and "lines left out" not in short_new
