"""Where a diff applies, with the real git: forward, already applied, or not at all (exit 2)."""

from __future__ import annotations

import os

import pytest
from review_helpers import BUGGY, CALC, diff_of

from memdoor.core.errors import ReviewInputError
from memdoor.review.diff import parse_diff
from memdoor.review.repo import (
    GitChange,
    applies,
    apply_patch,
    changed_copy,
    check_agreement,
    git_changes,
    repo_root,
    shown_name,
    tracked_files,
)


def test_repo_root_from_a_subdirectory(repo):
    (repo / "pkg").mkdir()
    assert repo_root(repo / "pkg") == repo.resolve()


def test_not_a_checkout_is_bad_input(tmp_path):
    with pytest.raises(ReviewInputError, match="not in a git checkout"):
        repo_root(tmp_path)
    with pytest.raises(ReviewInputError, match="not a directory"):
        repo_root(tmp_path / "missing")


def test_forward_diff_is_applied_to_a_copy_not_the_tree(repo, bug_diff, tmp_path):
    assert applies(repo, bug_diff) == "forward"
    copy = changed_copy(repo, bug_diff, tmp_path / "copy")
    assert (copy / "calc.py").read_text() == BUGGY
    assert (repo / "calc.py").read_text() == CALC  # the user's tree is untouched
    assert (copy / "test_calc.py").exists() and not (copy / ".git").exists()


def test_a_tree_that_already_holds_the_change_is_used_as_it_is(repo, bug_diff, tmp_path):
    (repo / "calc.py").write_text(BUGGY)  # `git diff main | memdoor review -` on the branch
    assert applies(repo, bug_diff) == "applied"
    copy = changed_copy(repo, bug_diff, tmp_path / "copy")
    assert (copy / "calc.py").read_text() == BUGGY


def test_a_diff_that_does_not_apply_is_bad_input(repo, tmp_path):
    other = diff_of(repo, "calc.py", CALC.replace("total = 0", "total = 0.0"))
    (repo / "calc.py").write_text(CALC.replace("for x in xs", "for y in xs"))
    with pytest.raises(ReviewInputError, match="does not apply") as e:
        changed_copy(repo, other.replace("total = 0\n", "totally = 0\n"), tmp_path / "copy")
    assert "\n" not in str(e.value)


def test_apply_patch_in_a_plain_directory(repo, bug_diff, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "calc.py").write_text(CALC)
    apply_patch(plain, bug_diff)
    assert (plain / "calc.py").read_text() == BUGGY
    with pytest.raises(ReviewInputError):
        apply_patch(plain, bug_diff)  # it is already there


ONE_LINE = "@@ -1 +1 @@\n-def mean(xs):\n+def mean(xs, /):\n"
AGREE = [  # header forms git and the review read alike: git's files are the files reviewed
    "diff --git a/calc.py b/calc.py\nindex 1..2 100644\n--- a/calc.py\n+++ b/calc.py\n" + ONE_LINE,
    '--- "a/calc\\056py"\n+++ "b/calc\\056py"\n' + ONE_LINE,  # a quoted path with an escape
    "--- old/calc.py\n+++ new/calc.py\n" + ONE_LINE,  # git strips any first directory
    "diff --git a/calc.py b/calc.py\nsome text\n--- a/calc.py\n+++ b/calc.py\n" + ONE_LINE,
    "Subject: a commit message\n--- a/notes\n+++ b/notes\nnot a hunk\n---\n"  # '---' lines in free text
    "--- a/calc.py\n+++ b/calc.py\n" + ONE_LINE,
    "diff --git a/a b.py b/a b.py\nnew file mode 100644\n--- /dev/null\n+++ b/a b.py\t\n@@ -0,0 +1 @@\n+x\n",
    "diff --git a/calc.py b/calc.py\nold mode 100644\nnew mode 100755\n",  # mode only: no hunk
    "diff --git a/calc.py b/m.py\nsimilarity index 100%\nrename from calc.py\nrename to m.py\n",
    "diff --git a/calc.py b/m.py\nsimilarity index 90%\ncopy from calc.py\ncopy to m.py\n--- a/calc.py\n"
    "+++ b/m.py\n" + ONE_LINE,
]
DISAGREE = [  # header forms git reads otherwise than a naive reading: refused, never half-reviewed
    ("--- a/calc.py\n+++ b/calc.py.orig\n" + ONE_LINE, "'calc.py.orig' (+1 -1) for the review and 'calc.py'"),
    ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-def mean(xs):\n", "'dev/null'"),
    ("--- calc.py 2024-01-01 10:00:00.000000000 +0100\n+++ calc.py 2024-01-01 10:00:00.000000000 +0100\n"
     + ONE_LINE, "for git"),
]  # fmt: skip


@pytest.mark.parametrize("diff", AGREE)
def test_the_files_reviewed_are_the_files_git_changes(repo, diff):
    files = parse_diff(diff)
    changes = git_changes(repo, diff)
    check_agreement(files, changes)
    assert [f.path for f in files] == [c.path for c in changes] and changes


@pytest.mark.parametrize(("diff", "says"), DISAGREE)
def test_a_diff_git_reads_differently_is_refused(repo, diff, says):
    with pytest.raises(ReviewInputError) as e:
        check_agreement(parse_diff(diff), git_changes(repo, diff))
    assert "the review and git read the diff differently" in str(e.value) and says in str(e.value)
    assert "\n" not in str(e.value)


def test_a_file_git_changes_that_the_review_does_not_read_is_a_disagreement(repo):
    diff = diff_of(repo, "calc.py", BUGGY)
    files = parse_diff(diff)
    with pytest.raises(ReviewInputError) as e:
        check_agreement(files, [*git_changes(repo, diff), GitChange(path="extra.py", added=1, deleted=0)])
    assert "file 2 is nothing for the review and 'extra.py' (+1 -0) for git" in str(e.value)


def test_git_runs_no_filter_the_repository_names(repo, bug_diff, tmp_path):
    """`git apply --check` reads the working tree through the filters .gitattributes names; the
    review's git empties every configured filter driver, so none runs."""
    from review_helpers import git

    marker = tmp_path / "ran"
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(repo, "config", "filter.evil.smudge", f"touch {marker}; cat")
    assert applies(repo, bug_diff) == "forward"
    changed_copy(repo, bug_diff, tmp_path / "copy")
    assert not marker.exists()


ODD = os.fsdecode(b"u\xfe.txt")
"""A file name that is not UTF-8 (its byte 0xfe kept as a surrogate, as git's output is read)."""


def test_a_file_name_that_is_not_utf8_is_listed_and_copied(repo, bug_diff, tmp_path):
    """An untracked file whose name is not UTF-8, beside the change: git's listing of the checkout is
    read with its bytes kept, and the copy holds the file under the same bytes."""
    (repo / ODD).write_text("odd\n")
    assert ODD in tracked_files(repo)
    copy = changed_copy(repo, bug_diff, tmp_path / "copy")
    assert b"u\xfe.txt" in os.listdir(os.fsencode(copy)) and (copy / "calc.py").read_text() == BUGGY


def test_a_filter_whose_name_is_not_utf8_is_emptied_too(repo, bug_diff, tmp_path):
    from review_helpers import git

    marker = tmp_path / "ran"
    name = os.fsdecode(b"ev\xffl")
    (repo / ".gitattributes").write_bytes(b"*.py filter=ev\xffl\n")
    git(repo, "config", f"filter.{name}.clean", f"touch {marker}; cat")
    git(repo, "config", f"filter.{name}.smudge", f"touch {marker}; cat")
    assert applies(repo, bug_diff) == "forward"
    changed_copy(repo, bug_diff, tmp_path / "copy")
    assert not marker.exists()


def test_a_name_that_is_not_utf8_is_shown_with_its_bytes_escaped():
    assert shown_name(ODD) == "u\\xfe.txt" and shown_name(ODD).encode("utf-8")
    assert shown_name("t\u00e9st.py") == "t\u00e9st.py"  # UTF-8 names are unchanged


def test_a_diff_that_applies_both_ways_is_refused(repo, tmp_path):
    """A line added among repeated lines finds its context in the tree that already holds it: applied
    forward first, the change was made twice (and could cancel itself out in the tests)."""
    from review_helpers import git

    plain = CALC + "\n" * 10 + "# end\n"
    (repo / "calc.py").write_text(plain)
    git(repo, "commit", "-qam", "blank lines")
    changed = CALC + "\n" * 3 + "mean = abs\n" + "\n" * 7 + "# end\n"
    diff = diff_of(repo, "calc.py", changed)
    (repo / "calc.py").write_text(changed)  # the checkout holds the change, and it applies again
    with pytest.raises(ReviewInputError, match="both as it is and in reverse") as e:
        changed_copy(repo, diff, tmp_path / "copy")
    assert "\n" not in str(e.value) and not (tmp_path / "copy").exists()
