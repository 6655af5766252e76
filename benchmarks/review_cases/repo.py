"""A case as the review sees it: a git repository at the base commit, the change as a diff, a description.

The repository holds ``solution.py`` and ``test_public.py`` (the public tests, run by ``TEST_COMMAND``);
hidden tests are never written there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from pydantic import BaseModel

from review_cases.records import ReviewCase

TEST_COMMAND = "python3 -m unittest test_public"
"""The review's --test command in a case's repository."""

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@memdoor",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@memdoor",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


class CaseFiles(BaseModel):
    """Where a case was written: the repository (at the base), the diff file and the description file."""

    repo: Path
    diff: Path
    description: Path


def _git(root: Path, *args: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env)
    return done.stdout


def write_case(case: ReviewCase, root: Path) -> CaseFiles:
    """``root/repo`` (a git repository with one commit, the base), ``root/change.diff`` and
    ``root/description.txt``; the working tree is left at the base."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "solution.py").write_text(case.before)
    (repo / "test_public.py").write_text(case.tests_before)
    _git(repo, "add", "solution.py", "test_public.py")
    _git(repo, "commit", "-qm", f"{case.entry}: the reference")
    (repo / "solution.py").write_text(case.after)
    (repo / "test_public.py").write_text(case.tests_after)
    diff = _git(repo, "diff", "--no-ext-diff", "--no-textconv")
    _git(repo, "checkout", "-q", "--", "solution.py", "test_public.py")
    files = CaseFiles(repo=repo, diff=root / "change.diff", description=root / "description.txt")
    files.diff.write_text(diff)
    files.description.write_text(case.description + "\n")
    return files
