"""Files of the base and of the changed tree by suffix or by name, for the other languages' sandbox programs
and for mining inputs from the base's tests and examples.

The base is the changed copy except the diff's own files, which come from the base's directory (the base
commit's files with ``--base``, else the diff reversed: :func:`memdoor.review.differential.trees.base_files`),
or are absent (added by the change).
Everything is read as the review reads the copy (:func:`memdoor.review.files.inspect`: no link followed,
regular files of bounded size), and walks and totals are bounded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from memdoor.review.diff import FileDiff
from memdoor.review.differential.trees import MAX_TREE_CHARS, SKIP_DIRS, read_tree, touched_paths
from memdoor.review.files import inspect

MAX_WALK = 20_000
"""Files looked at per walk of a tree at most."""


def paths_where(root: Path, accept: Callable[[str], bool], limit: int = MAX_WALK) -> list[str]:
    """Repository paths of the regular files under ``root`` that ``accept`` takes (links neither followed
    nor listed; build and dependency folders left out), in walk order, looking at ``limit`` files at most."""
    out: list[str] = []
    seen = 0
    for base, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and d != "target" and not d.startswith("."))
        rel = Path(base).relative_to(root)
        for name in sorted(names):
            seen += 1
            if seen > limit:
                return out
            path = (rel / name).as_posix()
            if accept(path) and is_regular(Path(base) / name):
                out.append(path)
    return out


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a link to one)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def base_texts(
    changed: Path, base_dir: Path, files: list[FileDiff], accept: Callable[[str], bool],
    max_files: int = 200, max_chars: int = 400_000,
) -> dict[str, str]:  # fmt: skip
    """The base's texts of the files ``accept`` takes (at most ``max_files``, ``max_chars`` in all)."""
    touched = touched_paths(files)
    paths = [p for p in paths_where(changed, accept) if p not in touched]
    paths += [p for p in sorted(touched) if accept(p)]
    out: dict[str, str] = {}
    size = 0
    for rel in paths[: max_files * 2]:
        text = inspect(base_dir if rel in touched else changed, rel).text
        if text is None or size + len(text) > max_chars:
            continue
        out[rel] = text
        size += len(text)
        if len(out) >= max_files:
            break
    return out


def version_texts(
    changed: Path, base_dir: Path, files: list[FileDiff], accept: Callable[[str], bool], wanted: list[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The files ``accept`` takes of the base and of the changed tree (the ``wanted`` ones first, then their
    neighbours, :data:`MAX_TREE_CHARS` in all each)."""
    head_paths = paths_where(changed, accept)
    head = read_tree(changed, head_paths, wanted)
    touched = touched_paths(files)
    base = read_tree(base_dir, [p for p in sorted(touched) if accept(p)], wanted)
    untouched = [p for p in head_paths if p not in touched]
    base.update(read_tree(changed, untouched, wanted, MAX_TREE_CHARS - sum(map(len, base.values()))))
    return base, head
