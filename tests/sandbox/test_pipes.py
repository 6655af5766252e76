"""The result stream cut into frames: whole frames only, and a malformed stream reported after the good ones."""

from __future__ import annotations

import json

from memdoor.sandbox.pipes import FRAME_HEAD, MAX_HEADER, FrameReader


def frame(head: dict, payload: bytes = b"") -> bytes:
    text = json.dumps(head).encode()
    return FRAME_HEAD.pack(len(text), len(payload)) + text + payload


def test_frames_split_across_reads_come_out_whole():
    data = frame({"ev": "boot"}) + frame({"ev": "res", "i": 0}, b"42")
    reader = FrameReader(max_payload=100)
    got = []
    for k in range(len(data)):  # one byte per read
        frames, broken = reader.feed(data[k : k + 1])
        assert broken is None
        got += frames
    assert got == [({"ev": "boot"}, b""), ({"ev": "res", "i": 0}, b"42")]


def test_good_frames_read_with_a_forgery_are_kept_and_the_forgery_reported():
    good = frame({"ev": "boot"}) + frame({"ev": "job"})
    for forged, why in [
        (FRAME_HEAD.pack(4, 0) + b"nope", "malformed result stream"),
        (frame(["a", "list"]), "malformed result stream"),
        (FRAME_HEAD.pack(MAX_HEADER + 1, 0), "result stream too large or malformed"),
        (FRAME_HEAD.pack(2, 101) + b"{}", "result stream too large or malformed"),
    ]:
        frames, broken = FrameReader(max_payload=100).feed(good + forged)
        assert frames == [({"ev": "boot"}, b""), ({"ev": "job"}, b"")]
        assert broken == why
