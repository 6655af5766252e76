"""The Python files of the base and of the changed tree, as the sandbox program carries them.

The changed tree is the review's changed copy. The base differs from it only in the diff's files, and
only those are read from the base's directory. A git range's base (``--base``) is built the one way the
review builds it for the tests too, from the base commit (:func:`memdoor.review.session.base_tree`,
handed in by the caller): never from the diff reversed, which the change's own ``.gitattributes`` can
make fail (``*.py text eol=crlf``: the reversed diff no longer applies to the copy). A diff file's base
is the diff's files alone, copied into a directory of their own with the diff applied there in reverse
(``git apply -R``), so it never needs a second copy of the whole repository. Files are read as the
review reads the copy (:func:`memdoor.review.files.inspect`): never through a link, regular files only,
each of bounded size; the whole is bounded too (:data:`MAX_TREE_CHARS`), the changed modules and their
neighbours first.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from memdoor.core.errors import ReviewInputError
from memdoor.review.diff import FileDiff
from memdoor.review.files import inspect
from memdoor.review.repo import copy_tree, os_reason
from memdoor.review.teststage import base_copy

MAX_TREE_CHARS = 2_000_000
"""Characters of Python source one version's sandbox program carries at most."""
SKIP_DIRS = frozenset(
    {".git", "__pycache__", "node_modules", "site-packages", "venv", ".venv", "env", ".tox", "build", "dist"}
)


def python_paths(root: Path) -> list[str]:
    """Repository paths of the regular ``.py`` files under ``root`` (links neither followed nor listed)."""
    out = []
    for base, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        rel = Path(base).relative_to(root)
        for name in sorted(files):
            if name.endswith(".py"):
                path = Path(base) / name
                if stat.S_ISREG(os.lstat(path).st_mode):
                    out.append((rel / name).as_posix())
    return out


def _closeness(path: str, wanted: list[str]) -> tuple[int, int, str]:
    """Sort key: the wanted files first, then files sharing the most leading directories with one."""
    if path in wanted:
        return (0, 0, path)
    parts = PurePosixPath(path).parts[:-1]
    shared = 0
    for w in wanted:
        wp = PurePosixPath(w).parts[:-1]
        k = 0
        while k < min(len(parts), len(wp)) and parts[k] == wp[k]:
            k += 1
        shared = max(shared, k - (len(parts) - k))
    return (1, -shared, path)


def read_tree(root: Path, paths: list[str], wanted: list[str], limit: int = MAX_TREE_CHARS) -> dict[str, str]:
    """The texts of ``paths`` under ``root`` (the ``wanted`` ones first, then the nearest), up to ``limit``
    characters in all; files that are not readable text are left out."""
    out, size = {}, 0
    for rel in sorted(paths, key=lambda p: _closeness(p, wanted)):
        text = inspect(root, rel).text
        if text is None:
            continue
        if size + len(text) > limit and rel not in wanted:
            continue
        out[rel] = text
        size += len(text)
    return out


def touched_paths(files: list[FileDiff]) -> set[str]:
    """The repository paths the diff touches, on either side (a rename's old path too)."""
    return {f.path for f in files} | {f.old_path for f in files if f.old_path}


def base_files(
    changed: Path, files: list[FileDiff], dest: Path, build: Callable[[Path], Path] | None = None
) -> Path:
    """``dest`` holding the diff's files as they were before the change. ``build``: the review's own way
    of building its base at a directory (a range's, from its base commit), which then makes ``dest``;
    without it (a diff file), the changed copy's versions of the diff's files
    (:func:`memdoor.review.repo.copy_tree`) with the diff applied in reverse. ReviewInputError when git
    cannot, or the copy fails."""
    if build is not None:
        return build(dest)
    try:
        copy_tree(changed, [f.path for f in files if not f.deleted], dest)
    except OSError as e:  # a copy the file system refused: the stage compares nothing, with the reason
        raise ReviewInputError(f"the base cannot be built: {os_reason(e, dest.parent)}") from None
    base_copy(dest, "".join(f.text for f in files))
    return dest


def version_files(
    changed: Path, base_dir: Path, files: list[FileDiff], wanted_head: list[str], wanted_base: list[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The Python files of the base and of the changed tree, as texts by repository path: the base's are
    the changed copy's, except the diff's own files, which come from ``base_dir`` (:func:`base_files`)
    or are absent from the base (added by the change)."""
    head_paths = python_paths(changed)
    head = read_tree(changed, head_paths, wanted_head)
    touched = touched_paths(files)
    from_base = [p for p in sorted(touched) if p.endswith(".py")]
    base = read_tree(base_dir, from_base, wanted_base)  # a link or a missing file: not read
    untouched = [p for p in head_paths if p not in touched]
    base.update(read_tree(changed, untouched, wanted_base, MAX_TREE_CHARS - sum(map(len, base.values()))))
    return base, head
