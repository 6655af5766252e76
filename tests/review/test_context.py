"""What an agent sees: per file, the diff and numbered lines of the changed file; what is skipped and why."""

from __future__ import annotations

from review_helpers import BUGGY, diff_of, git

from memdoor.review.context import build_parts
from memdoor.review.diff import parse_diff
from memdoor.review.repo import changed_copy


def test_numbered_lines_of_the_changed_file(repo, bug_diff, tmp_path):
    copy = changed_copy(repo, bug_diff, tmp_path / "copy")
    (part,), skipped = build_parts(parse_diff(bug_diff), copy, 24_000)
    assert skipped == [] and part.file == "calc.py"
    assert "6 | " + BUGGY.splitlines()[5] in part.code.splitlines()
    assert part.diff.startswith("diff --git a/calc.py")


def test_large_diffs_split_per_file_and_skipped_files_say_why(repo, tmp_path):
    big = "\n".join(f"v{i} = {i}" for i in range(400)) + "\n"
    small = "x = 1\n"
    diff = diff_of(repo, "big.py", big) + diff_of(repo, "small.py", small)
    copy = changed_copy(repo, diff, tmp_path / "copy")
    parts, skipped = build_parts(parse_diff(diff), copy, 2_000)
    assert [p.file for p in parts] == ["small.py"]
    assert [s.file for s in skipped] == ["big.py"] and "exceeds 2000" in skipped[0].reason


def test_context_shrinks_before_a_part_is_skipped(repo, tmp_path):
    long = "\n".join(f"line{i} = {i}" for i in range(200)) + "\n"
    (repo / "long.py").write_text(long)
    git(repo, "add", "long.py")
    git(repo, "commit", "-qm", "long")
    diff = diff_of(repo, "long.py", long.replace("line100 = 100", "line100 = -100"))
    copy = changed_copy(repo, diff, tmp_path / "copy")
    (part,), _ = build_parts(parse_diff(diff), copy, len(diff) + 400)
    assert "line100 = -100" in part.code and "line80 " not in part.code


def test_deleted_file_is_skipped(tmp_path):
    diff = (
        "--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n--- a/k.py\n+++ b/k.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    (tmp_path / "k.py").write_text("b\n")
    parts, skipped = build_parts(parse_diff(diff), tmp_path, 10_000)
    assert [p.file for p in parts] == ["k.py"] and skipped[0].reason == "deleted by the diff"


def test_lines_are_numbered_as_git_numbers_them(repo, tmp_path):
    """Issue 41 (security review): a form feed, ``\\x1c``, ``\\x85`` or ``\\u2028`` inside a line does not
    end it for git; the numbered code must not shift after one."""
    text = "a = 1\n# page\x0cbreak\nb = '\u2028'\nc = '\x1c\x85'\nd = 4\n"
    (repo / "odd.py").write_text(text)
    git(repo, "add", "odd.py")
    git(repo, "commit", "-qm", "odd")
    diff = diff_of(repo, "odd.py", text.replace("d = 4", "d = -4"))
    copy = changed_copy(repo, diff, tmp_path / "copy")
    (part,), _ = build_parts(parse_diff(diff), copy, 24_000)
    assert "5 | d = -4" in part.code.split("\n")
