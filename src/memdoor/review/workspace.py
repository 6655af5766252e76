"""The review's temporary directory, removed however deep or odd the tree a pull request left in it.

``shutil.rmtree`` recurses once per directory level (Python 3.11), so a tree 2,000 directories deep
raised RecursionError and stayed behind. :func:`remove_tree` walks down and back up with one open
directory at a time, names relative to it (no path grows with the depth, no recursion), never follows
a link, and makes a directory writable before emptying it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _first_subdirectory(fd: int) -> str | None:
    """Remove every non-directory in the directory ``fd``; the name of a subdirectory left, if any."""
    with contextlib.suppress(OSError):
        os.chmod(fd, 0o700)
    for entry in os.scandir(fd):
        if entry.is_dir(follow_symlinks=False):
            return entry.name
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.name, dir_fd=fd)
    return None


def remove_tree(path: Path) -> None:
    """Remove the directory ``path`` and everything under it (OSError if something cannot be removed)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    fd = os.open(path, _DIR_FLAGS)
    names: list[str] = []  # the way down from ``path``, one name per level
    try:
        while True:
            sub = _first_subdirectory(fd)
            if sub is not None:
                inner = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
                names.append(sub)
                continue
            if not names:
                break
            outer = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = outer
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    with contextlib.suppress(FileNotFoundError):  # gone already
        os.rmdir(path)


@contextlib.contextmanager
def workspace(prefix: str = "memdoor-review-") -> Iterator[Path]:
    """A fresh temporary directory, removed on exit with :func:`remove_tree` (a failure to remove it is
    not an error of the review: the directory is left, and the review's result is not lost)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            remove_tree(path)
