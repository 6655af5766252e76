"""One patch from the consensus suggestions: real `git apply` accepts it; overlaps and bad lines are left out."""

from __future__ import annotations

from review_helpers import BUGGY, CALC, FIX

from memdoor.review.consensus import Group
from memdoor.review.patch import assemble
from memdoor.review.repo import apply_patch


def group(line: int, end: int, suggestion: str | None, file: str = "calc.py") -> Group:
    return Group(
        file=file, line=line, end_line=end, severity="high", kind="bug", message="m",
        suggestion=suggestion, agents=["agent0", "agent1"],
    )  # fmt: skip


def changed(tmp_path, text: str = BUGGY):
    d = tmp_path / "changed"
    d.mkdir()
    (d / "calc.py").write_text(text)
    return d


def test_patch_applies_with_git_and_holds_the_suggestions(tmp_path):
    d = changed(tmp_path)
    doc = '    """The arithmetic mean of numbers (0 for none)."""'
    patch = assemble([group(6, 6, FIX), group(2, 2, doc), group(9, 9, None)], d)
    assert patch.findings == [0, 1] and patch.left_out == []
    apply_patch(d, patch.diff)
    text = (d / "calc.py").read_text()
    assert FIX in text and doc in text and "len(xs) - 1" not in text


def test_overlapping_and_out_of_range_suggestions_are_left_out(tmp_path):
    d = changed(tmp_path)
    patch = assemble(
        [group(5, 6, "        total += x\n" + FIX), group(6, 6, "    return 0"), group(60, 61, "x")], d
    )
    assert patch.findings == [0]
    assert any("overlaps" in why for why in patch.left_out)
    assert any("has 6 lines" in why for why in patch.left_out)


def test_a_multi_line_replacement_and_a_deletion(tmp_path):
    d = changed(tmp_path)
    patch = assemble([group(3, 5, "    total = sum(xs)"), group(6, 6, "")], d)
    apply_patch(d, patch.diff)
    assert (d / "calc.py").read_text().splitlines()[2:] == ["    total = sum(xs)"]


def test_a_file_without_a_final_newline(tmp_path):
    d = changed(tmp_path, BUGGY.rstrip("\n"))
    patch = assemble([group(6, 6, FIX)], d)
    assert "No newline at end of file" in patch.diff
    apply_patch(d, patch.diff)
    assert (d / "calc.py").read_text().endswith(FIX)


def test_nothing_to_patch(tmp_path):
    d = changed(tmp_path, CALC)
    assert assemble([group(6, 6, None)], d) is None
    unchanged = assemble([group(6, 6, CALC.splitlines()[5])], d)
    assert unchanged.diff == "" and "changes nothing" in unchanged.left_out[0]


def test_suggestions_name_lines_as_git_counts_them(tmp_path):
    """Issue 41 (security review): ``\\x0c`` or ``\\u2028`` inside a line is not a line break for git."""
    d = changed(tmp_path, "# page\x0cbreak \u2028 here\n" + BUGGY)
    patch = assemble([group(7, 7, FIX)], d)  # BUGGY's line 6, one line down
    assert patch.findings == [0] and patch.left_out == []
    apply_patch(d, patch.diff)
    text = (d / "calc.py").read_text()
    assert FIX in text and "len(xs) - 1" not in text and text.startswith("# page\x0cbreak \u2028 here\n")
