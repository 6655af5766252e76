"""``memdoor review`` in a checkout holding file names that are not UTF-8 (bytes a file system allows):
one beside the change never stops the review, a binary one in a range is skipped under a name a report
and a trace can hold, and a text one in the change is refused in one line (exit 2)."""

from __future__ import annotations

import json
import os

import pytest
from test_review_cli import BUGGY, git, make_home, memdoor, models

ODD = os.fsdecode(b"u\xfe.txt")
"""A name that is not UTF-8 (its byte 0xfe as a surrogate: how Python passes it to the file system)."""


@pytest.fixture
def home(tmp_path):
    return make_home(tmp_path)


def _trace_saved(home, stdout: str) -> None:
    trace_id = stdout.rsplit("memdoor trace ", 1)[1].split("`", 1)[0]
    assert any(trace_id in p.name for p in (home / "mdhome" / "traces").rglob("*")), trace_id


@pytest.mark.parametrize("source", ["diff", "base"])
def test_a_file_name_that_is_not_utf8_beside_the_change_does_not_stop_the_review(home, source):
    repo = home / "repo"
    (repo / ODD).write_text("an untracked file beside the change\n")
    if source == "base":
        (repo / "calc.py").write_text(BUGGY)
    args = ["../change.diff"] if source == "diff" else ["--base", "HEAD"]
    r = memdoor(home, *args, "--agents", "1", *models(home, "minor"), "--stages", "reading")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    _trace_saved(home, r.stdout)


def test_a_binary_file_named_in_bytes_is_skipped_under_an_escaped_name(home):
    repo = home / "repo"
    (repo / "calc.py").write_text(BUGGY)
    (repo / os.fsdecode(b"b\xff.bin")).write_bytes(b"\x00\x01\x02")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a change and a binary file")
    base = ["--base", "HEAD~1", "--agents", "1", *models(home, "minor"), "--stages", "reading"]
    r = memdoor(home, *base, "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["skipped"] == [{"file": "b\\xff.bin", "reason": "binary file: not reviewed"}]
    r = memdoor(home, *base)
    assert r.returncode == 0 and "b\\xff.bin" in r.stdout, r.stderr
    _trace_saved(home, r.stdout)


def test_a_changed_text_file_named_in_bytes_is_refused_in_one_line(home):
    repo = home / "repo"
    (repo / os.fsdecode(b"t\xfe.py")).write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a file named in bytes")
    r = memdoor(home, "--base", "HEAD~1", "--agents", "1", *models(home, "minor"))
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert "not UTF-8" in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
