"""The repository a diff is reviewed against: where it is, whether the diff applies, and working copies.

The diff is applied to a copy, never to the user's tree. ``git diff main | memdoor review -`` run in a
checkout that already holds the change is recognised too: the diff then applies in reverse, and the
tree as it is already is the changed code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from memdoor.errors import ReviewInputError

GIT_TIMEOUT_S = 120.0


def git(
    args: list[str], cwd: Path, *, stdin: str | None = None, alone: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``git`` (never raises for its exit status; the caller reads ``returncode``). ``alone``: treat
    ``cwd`` as a plain directory even inside some checkout (``git apply`` then patches relative to it)."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)} if alone else None
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=env,
        )
    except FileNotFoundError:
        raise ReviewInputError("git is not installed (it is needed to apply the diff)") from None
    except subprocess.TimeoutExpired:
        raise ReviewInputError(f"git {args[0]} took more than {GIT_TIMEOUT_S:g} s in {cwd}") from None


def repo_root(directory: Path, flag: str = "--repo") -> Path:
    """The top of the git checkout holding ``directory``; ReviewInputError naming ``flag`` when there is none."""
    if not directory.is_dir():
        raise ReviewInputError(f"{flag} {directory}: not a directory")
    done = git(["rev-parse", "--show-toplevel"], directory)
    if done.returncode != 0:
        raise ReviewInputError(f"{flag} {directory}: not in a git checkout")
    return Path(done.stdout.strip())


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no reason given")


def applies(root: Path, diff: str) -> str:
    """``"forward"`` when the diff applies to the tree at ``root``, ``"applied"`` when the tree already holds
    it (it applies in reverse); else ReviewInputError with git's reason."""
    forward = git(["apply", "--check", "--whitespace=nowarn", "-"], root, stdin=diff)
    if forward.returncode == 0:
        return "forward"
    if git(["apply", "--check", "--reverse", "--whitespace=nowarn", "-"], root, stdin=diff).returncode == 0:
        return "applied"
    raise ReviewInputError(f"the diff does not apply to {root}: {_first_line(forward.stderr)}")


def tracked_files(root: Path) -> list[str]:
    """Files of the checkout (tracked, and untracked ones git does not ignore)."""
    done = git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
    if done.returncode != 0:
        raise ReviewInputError(f"cannot list the files of {root}: {_first_line(done.stderr)}")
    return sorted({p for p in done.stdout.split("\0") if p})


def copy_tree(root: Path, files: list[str], dest: Path) -> Path:
    """Copy ``files`` of ``root`` into ``dest`` (created; symlinks kept as links); returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel in files:
        src = root / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree but still in the index
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(src.readlink())
        elif src.is_file():
            shutil.copy2(src, target)
    return dest


def apply_patch(directory: Path, diff: str) -> None:
    """Apply ``diff`` to the files in ``directory`` with ``git apply``; ReviewInputError with git's reason."""
    done = git(["apply", "--whitespace=nowarn", "-"], directory, stdin=diff, alone=True)
    if done.returncode != 0:
        raise ReviewInputError(f"the diff does not apply to the copy: {_first_line(done.stderr)}")


def changed_copy(root: Path, diff: str, dest: Path) -> Path:
    """A copy of the checkout at ``root`` in ``dest`` with the diff's change in it (applied, unless the tree
    already holds it). ReviewInputError when the diff applies neither way."""
    how = applies(root, diff)
    copy_tree(root, tracked_files(root), dest)
    if how == "forward":
        apply_patch(dest, diff)
    return dest
