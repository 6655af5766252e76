"""The review's temporary directory goes away however deep a tree was left in it (no RecursionError)."""

from __future__ import annotations

import os
import shutil

import pytest

from memdoor.review.workspace import remove_tree, workspace


def deep_tree(top, depth: int, outside) -> None:
    """``depth`` nested directories under ``top`` (made relative to each other: no path grows)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
        if i % 700 == 0:  # files, links and a locked directory on the way down
            os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
            os.symlink(outside, "link", dir_fd=fd)
            os.mkdir("locked", dir_fd=fd)
            os.chmod("locked", 0, dir_fd=fd)
    os.close(fd)


def test_a_tree_2000_directories_deep_is_removed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    with pytest.raises(RecursionError):  # what the standard library does with it (Python 3.11)
        top = tmp_path / "std"
        top.mkdir()
        deep_tree(top, 2000, outside)
        shutil.rmtree(top)
    with workspace() as w:
        deep_tree(w, 2000, outside)
    assert not w.exists()
    remove_tree(tmp_path / "std")  # what rmtree left behind
    assert not (tmp_path / "std").exists()
    assert (outside / "keep").read_text() == "kept"  # links were removed, never followed


def test_removing_what_is_not_there_is_not_an_error(tmp_path):
    remove_tree(tmp_path / "nothing")
