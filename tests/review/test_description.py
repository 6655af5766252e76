"""The change's description: the text or @FILE, bounded; the range's commit messages kept apart."""

from __future__ import annotations

import pytest

from memdoor.core.errors import ReviewInputError
from memdoor.review.description import (
    MAX_DESCRIPTION_CHARS,
    MAX_DESCRIPTION_FILE_BYTES,
    cut_messages,
    messages_block,
    read_description,
)


def test_text_or_file_and_empty_is_none(tmp_path):
    assert read_description("  refactor, no behaviour change \n") == "refactor, no behaviour change"
    assert read_description(None) is None and read_description(" \n ") is None
    body = tmp_path / "pr.txt"
    body.write_text("Raise ValueError on empty input.\n")
    assert read_description(f"@{body}") == "Raise ValueError on empty input."
    body.write_text("\n")
    assert read_description(f"@{body}") is None


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read it"),
        (b"\xff\xfe not text", "not UTF-8"),
        (b"x" * (MAX_DESCRIPTION_FILE_BYTES + 1), "larger than"),
        (b"x" * (MAX_DESCRIPTION_CHARS + 1), "a description takes at most"),
    ],
)
def test_a_bad_file_is_one_line_of_bad_input(tmp_path, content, says):
    body = tmp_path / "pr.txt"
    if content is not None:
        body.write_bytes(content)
    with pytest.raises(ReviewInputError, match=says) as e:
        read_description(f"@{body}")
    assert "\n" not in str(e.value)


def test_only_a_regular_file_is_read(tmp_path):
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody writes: a blocking open or read would hang
    with pytest.raises(ReviewInputError, match="not a regular file"):
        read_description(f"@{fifo}")
    with pytest.raises(ReviewInputError, match="not a regular file"):
        read_description(f"@{tmp_path}")


def test_a_text_too_long_is_refused_not_cut():
    with pytest.raises(ReviewInputError, match="at most"):
        read_description("y" * (MAX_DESCRIPTION_CHARS + 1))


def test_commit_messages_are_a_block_of_their_own_bounded():
    assert messages_block("", "main..HEAD") is None and messages_block(" \n", "a..b") is None
    block = messages_block(cut_messages(["first\n", "", "second"]), "main..HEAD")
    assert block == "Commit messages of main..HEAD:\nfirst\n\nsecond"
    cut = cut_messages(["z" * 50], limit=10)
    assert cut.startswith("z" * 10) and "40 more characters" in cut and len(cut) < 60
