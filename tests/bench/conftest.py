"""Fixtures for the bench tests (helpers live in bench_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_helpers import ALL_FUNCTIONS, PROBLEMS_YAML, answers_file


@pytest.fixture
def problem_file(tmp_path: Path) -> Path:
    path = tmp_path / "problems.yaml"
    path.write_text(PROBLEMS_YAML)
    return path


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    return answers_file(tmp_path, [ALL_FUNCTIONS])
