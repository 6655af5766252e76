"""Signed records: what workers write to Redis, vouched for by the team key.

With a team key (``MEMDOOR_TEAM_KEY``, or a file named by ``MEMDOOR_TEAM_KEY_FILE`` / ``--team-key-file``)
every job result a worker stores and every seed answer a lead writes carries a ``signature`` field:
HMAC-SHA256 over ``[kind, key, record]`` in canonical JSON (sorted keys, no spaces, the record without
its signature), where ``key`` is the Redis key the record is written to. The key names the team's
prefix and the job id (run, request digest, repeat) or the task id, so a valid signature copied onto
another job, task or team does not verify. Readers holding the key refuse anything else
(:class:`~memdoor.core.errors.ForgedRecord`). The key itself is never printed: ``repr`` shows ``TeamKey(***)``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdoor.core.errors import ForgedRecord, UsageError
from memdoor.core.net import redact_spec
from memdoor.problems.jsonl import parse_json

ENV_KEY = "MEMDOOR_TEAM_KEY"
ENV_KEY_FILE = "MEMDOOR_TEAM_KEY_FILE"
MIN_KEY_BYTES = 16
"""A shorter key is refused (a team key is a shared secret, e.g. ``openssl rand -hex 32``)."""

RESULT = "result"
"""Kind of a job result (at ``P result:<job id>``)."""
ANSWER = "answer"
"""Kind of a seed answer (at ``memory:<id>``)."""

SIGNATURE = "signature"
"""The field of a signed record that holds its signature."""
_SCHEME = "hmac-sha256:"


class TeamKey:
    """The team's shared secret. Compare and print it only through this class."""

    __slots__ = ("_secret",)

    def __init__(self, secret: bytes):
        secret = secret.strip()
        if len(secret) < MIN_KEY_BYTES:
            raise UsageError(
                f"team key too short: at least {MIN_KEY_BYTES} bytes (e.g. openssl rand -hex 32)"
            )
        self._secret = secret

    def __repr__(self) -> str:
        return "TeamKey(***)"

    __str__ = __repr__

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> TeamKey:
        try:
            return cls(Path(path).read_bytes())
        except OSError as e:
            raise UsageError(f"cannot read the team key file {str(path)!r}: {e.strerror or e}") from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TeamKey | None:
        """The key from ``MEMDOOR_TEAM_KEY_FILE`` (a file) or ``MEMDOOR_TEAM_KEY`` (the secret), or None."""
        env = os.environ if environ is None else environ
        if env.get(ENV_KEY_FILE):
            return cls.from_file(env[ENV_KEY_FILE])
        if env.get(ENV_KEY):
            return cls(env[ENV_KEY].encode())
        return None

    def sign(self, kind: str, key: str, record: Mapping[str, Any]) -> str:
        """The signature of ``record`` (its ``signature`` field left out) as written at Redis key ``key``."""
        body = {k: v for k, v in record.items() if k != SIGNATURE}
        text = json.dumps([kind, key, body], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return _SCHEME + hmac.new(self._secret, text.encode(), hashlib.sha256).hexdigest()

    def signed(self, kind: str, key: str, record: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``record`` carrying its signature."""
        return {**record, SIGNATURE: self.sign(kind, key, record)}

    def dumps(self, kind: str, key: str, record: Mapping[str, Any]) -> str:
        """``record`` signed, as the JSON text written to Redis."""
        return json.dumps(self.signed(kind, key, record), ensure_ascii=False)

    def open(self, kind: str, key: str, raw: bytes | str | None) -> dict[str, Any]:
        """The record ``raw`` read from ``key``, if this key signed it for ``key``; else ForgedRecord
        saying why (the reason names no secret)."""
        if raw is None:
            raise ForgedRecord(f"nothing at {key}")
        try:
            record = parse_json(raw)
        except ValueError:  # not JSON, not UTF-8, or nested too deeply
            raise ForgedRecord(f"unreadable record at {key} (not JSON)") from None
        if not isinstance(record, dict):
            raise ForgedRecord(f"unreadable record at {key} (not a JSON object)")
        given = record.get(SIGNATURE)
        if not isinstance(given, str) or not given:
            raise ForgedRecord(f"unsigned record at {key}")
        expected = self.sign(kind, key, record)
        if not hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace")):
            raise ForgedRecord(f"bad signature on the record at {key}")
        return record

    def digest(self, text: str) -> str:
        """HMAC-SHA256 of ``text`` under the key, in hex (names a secret without showing it)."""
        return hmac.new(self._secret, text.encode(), hashlib.sha256).hexdigest()

    def vouches(self, kind: str, key: str, raw: bytes | str | None) -> bool:
        """Whether :meth:`open` would accept ``raw``."""
        try:
            self.open(kind, key, raw)
        except ForgedRecord:
            return False
        return True


SPEC_DIGEST_CHARS = 16
"""Hex digits of a spec's digest in the name its workers serve it under (64 bits)."""
_UNKEYED_SALT = b"memdoor model spec"
_UNKEYED_ROUNDS = 100_000


@functools.lru_cache(maxsize=256)
def _unkeyed_digest(spec: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", spec.encode(), _UNKEYED_SALT, _UNKEYED_ROUNDS).hex()


def served_name(spec: str, key: TeamKey | None) -> str:
    """The name of model ``spec`` in Redis (its job stream, registrations, jobs and results): the spec as
    :func:`~memdoor.core.net.redact_spec` shows it, unchanged when that hides nothing; else the shown spec
    and ``#`` and a digest of the raw spec, so that two specs that show alike (other passwords for one
    endpoint, a user name alone) never share a stream, and no secret is written to Redis. The digest is
    HMAC-SHA256 under the team key when there is one (nothing a reader of Redis can test a guessed
    password against); without a team key, PBKDF2-SHA256 (100,000 rounds, a fixed salt), which every
    worker and lead derives alike, and which a reader of Redis can test guessed passwords against,
    slowly. A served name is its own served name."""
    shown = redact_spec(spec)
    if shown == spec:
        return spec
    digest = key.digest(spec) if key is not None else _unkeyed_digest(spec)
    return f"{shown}#{digest[:SPEC_DIGEST_CHARS]}"
