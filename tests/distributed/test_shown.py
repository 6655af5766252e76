"""Text a Redis peer chose, fit for one log line: escaped, cut, and only as much of it read as is shown
(a key name of megabytes costs the lead nothing per poll); the lead remembers a bounded number of the
warnings it logged."""

from __future__ import annotations

from typing import ClassVar

import pytest

from memdoor.distributed.config import WorkerConfig
from memdoor.distributed.conn import shown
from memdoor.distributed.seed import NOTED_MAX, SeedLeader


class Bytes(bytes):
    """Bytes that record how many of them were decoded."""

    decoded: ClassVar[list[int]] = []

    def __getitem__(self, index):  # a slice stays a Bytes, so its decoding is recorded too
        got = super().__getitem__(index)
        return Bytes(got) if isinstance(index, slice) else got

    def decode(self, *args, **kwargs):
        Bytes.decoded.append(len(self))
        return super().decode(*args, **kwargs)


class Text(str):
    """A str that must not be read whole, character by character."""

    def __iter__(self):
        raise AssertionError("the whole text was read")


def test_a_huge_key_name_is_read_only_as_far_as_it_is_shown():
    Bytes.decoded = []
    out = shown(Bytes(b"task:" + b"\xff" * 10_000_000))
    assert out.startswith("task:\\xff\\xff") and len(out) == 200 and out.endswith("…")
    assert Bytes.decoded and max(Bytes.decoded) <= 800
    text = shown(Text("\x1b" * 10_000_000))
    assert text.startswith("\\x1b\\x1b") and len(text) == 200 and text.endswith("…")


@pytest.mark.parametrize(
    ("raw", "out"),
    [
        (b"run-1", "run-1"),
        ("é\n\x1b[31m", "é\\n\\x1b[31m"),
        (b"a\xffb", "a\\xffb"),
        ("x" * 200, "x" * 200),
        ("x" * 201, "x" * 199 + "…"),
        (b"\xf0\x9f\x98\x80" * 200, "\U0001f600" * 200),  # 800 bytes, 200 characters: all shown
        (b"\xf0\x9f\x98\x80" * 201, "\U0001f600" * 199 + "…"),
    ],
)
def test_shown_escapes_and_cuts(raw, out):
    assert shown(raw) == out


class _Redis:
    def register_script(self, script: str) -> None:
        return None


def test_a_lead_remembers_a_bounded_number_of_the_warnings_it_logged(caplog):
    lead = SeedLeader(WorkerConfig(agent_id="w1"), _Redis(), "i1")  # type: ignore[arg-type]
    for i in range(NOTED_MAX + 500):
        lead._note(f"skipped the key task:{i}")
    lead._note(f"skipped the key task:{NOTED_MAX + 499}")  # a recent one: not logged again
    assert len(lead._noted) == NOTED_MAX
    assert caplog.text.count("skipped the key task:") == NOTED_MAX + 500
