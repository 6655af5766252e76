"""The team key: what it vouches for (a record signed for its very Redis key), and what it refuses."""

from __future__ import annotations

import json

import pytest

from memdoor.core.errors import ForgedRecord, UsageError
from memdoor.distributed.signing import ANSWER, RESULT, TeamKey

SECRET = b"0123456789abcdef-team-secret"
KEY = TeamKey(SECRET)
WHERE = "memdoor:result:run1:abc:0"
RECORD = {"job": "run1:abc:0", "ok": True, "seconds": 0.25, "response": {"completions": [{"text": "é"}]}}


def test_a_signed_record_opens_with_the_key_it_was_signed_for():
    raw = KEY.dumps(RESULT, WHERE, RECORD)
    opened = KEY.open(RESULT, WHERE, raw)
    assert {k: v for k, v in opened.items() if k != "signature"} == RECORD
    assert KEY.open(RESULT, WHERE, raw.encode()) == opened  # bytes as Redis returns them


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (json.dumps(RECORD), "unsigned"),
        (json.dumps({**RECORD, "signature": "hmac-sha256:" + "0" * 64}), "bad signature"),
        (json.dumps({**RECORD, "signature": "hmac-sha256:é"}), "bad signature"),
        (json.dumps({**RECORD, "signature": 7}), "unsigned"),
        ("not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        (b"\xff\xfe", "not JSON"),
    ],
)
def test_what_the_key_did_not_sign_is_refused(raw, why):
    with pytest.raises(ForgedRecord, match=why):
        KEY.open(RESULT, WHERE, raw)
    assert not KEY.vouches(RESULT, WHERE, raw)


def test_a_signature_does_not_move_to_another_key_kind_record_or_team():
    raw = KEY.dumps(RESULT, WHERE, RECORD)
    assert not KEY.vouches(RESULT, "memdoor:result:run1:abc:1", raw)  # another job
    assert not KEY.vouches(RESULT, "other:result:run1:abc:0", raw)  # another team prefix
    assert not KEY.vouches(ANSWER, WHERE, raw)  # another kind
    changed = json.dumps({**json.loads(raw), "ok": False})
    assert not KEY.vouches(RESULT, WHERE, changed)  # one field changed
    assert not TeamKey(b"another-team-secret-0123456").vouches(RESULT, WHERE, raw)


def test_the_key_is_never_shown_and_a_short_one_is_refused(tmp_path):
    assert SECRET.decode() not in repr(KEY) + str(KEY) + f"{KEY!r} {[KEY]}"
    with pytest.raises(UsageError, match="too short"):
        TeamKey(b"short")
    (tmp_path / "key").write_bytes(SECRET + b"\n")
    assert TeamKey.from_file(tmp_path / "key").vouches(RESULT, WHERE, KEY.dumps(RESULT, WHERE, RECORD))
    with pytest.raises(UsageError, match="cannot read the team key file"):
        TeamKey.from_file(tmp_path / "missing")
    assert TeamKey.from_env({}) is None
    env = {"MEMDOOR_TEAM_KEY": SECRET.decode()}
    assert TeamKey.from_env(env).vouches(RESULT, WHERE, KEY.dumps(RESULT, WHERE, RECORD))
