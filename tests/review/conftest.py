"""Fixtures of the review tests: a real git repository and the diff of a buggy change to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_helpers import BUGGY, diff_of, make_repo


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def bug_diff(repo) -> str:
    return diff_of(repo, "calc.py", BUGGY)
