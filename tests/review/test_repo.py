"""Where a diff applies, with the real git: forward, already applied, or not at all (exit 2)."""

from __future__ import annotations

import pytest
from review_helpers import BUGGY, CALC, diff_of

from memdoor.errors import ReviewInputError
from memdoor.review.repo import applies, apply_patch, changed_copy, repo_root


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
