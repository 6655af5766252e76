"""The error hierarchy. Errors are types: callers decide by ``isinstance``, never by message text.

Every error a user can cause carries a one-line message meant to be printed as is
(the CLI prints ``memdoor: <message>`` and exits with code 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


def qualified_name(kind: type[BaseException]) -> str:
    """``memdoor.core.errors.SandboxError``: how an error's type is recorded (stores, answers)."""
    return f"{kind.__module__}.{kind.__qualname__}"


def validation_problems(error: ValidationError) -> str:
    """Every problem of a pydantic validation error on one line: ``field.sub: message; other: message``."""
    return "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in error.errors())


def first_problem(error: ValidationError) -> tuple[str, str]:
    """``(field path, message)`` of a pydantic validation error's first problem (path ``""``: the whole
    value), for errors that name one field."""
    err = error.errors()[0]
    return ".".join(map(str, err["loc"])), err["msg"]


class MemdoorError(Exception):
    """Base of every error Memdoor raises on purpose."""

    exit_code = 2


class UsageError(MemdoorError):
    """A command line or configuration value that cannot be used (bad flag combination, unknown name)."""


class ProblemFormatError(MemdoorError):
    """A problem file that cannot be read. Names the file, the record (line) and the field."""

    def __init__(self, path: str, record: int | str | None, field: str | None, reason: str):
        self.path, self.record, self.field, self.reason = path, record, field, reason
        where = str(path)
        if record is not None:
            where += f": line {record}" if isinstance(record, int) else f": {record}"
        if field:
            where += f": field {field!r}"
        super().__init__(f"{where}: {reason}")


class ModelSpecError(MemdoorError):
    """A model spec such as ``openai:NAME@URL`` or ``local:NAME`` that cannot be parsed or resolved."""


class ModelError(MemdoorError):
    """A model call failed for good (after the retries its backend allows).

    Backends that retry set ``retries`` and ``latency_s`` on the instance, so a ledger can record what
    the failed call cost.
    """

    retries: int = 0
    latency_s: float = 0.0


class RateLimited(ModelError):
    """The endpoint answered 429 (rate limit) and kept answering it until retries ran out."""


class ModelTimeout(ModelError):
    """The endpoint did not answer within the request timeout, until retries ran out."""


class ModelUnavailable(ModelError):
    """The endpoint refused the connection, dropped it, or answered 5xx/garbage until retries ran out."""


class WeightsError(MemdoorError):
    """Embedded model weights are missing, incomplete or fail their pinned SHA-256."""


class SandboxError(MemdoorError):
    """The sandbox itself cannot run (no usable interpreter, isolation tool broken).

    Never raised for anything a candidate program does: that is a verdict.
    """


class BudgetExceeded(MemdoorError):
    """A strategy's budget (tokens, calls or wall seconds) is spent. Strategies catch it and stop cleanly."""

    def __init__(self, what: str, spent: float, limit: float):
        self.what, self.spent, self.limit = what, spent, limit
        super().__init__(f"budget exceeded: {what} {spent:g} of {limit:g}")


class MemoryStoreError(MemdoorError):
    """The shared memory store (e.g. Redis) cannot be reached or answered something unusable."""


class RedisTLSError(MemoryStoreError):
    """Redis over TLS (``rediss://``) whose certificate the given CA does not vouch for."""


class ForgedRecord(MemdoorError):
    """A record read from Redis that the team key does not vouch for: unsigned, badly signed, signed
    for another key, or unreadable. It is refused (never taken); the genuine record is waited for."""


class ResultsStoreError(MemdoorError):
    """A benchmark results directory that cannot be used (another config, damaged database)."""


class ReviewInputError(UsageError):
    """A diff ``memdoor review`` cannot review: not a diff, binary, too large, or not applying to the repository."""


class NothingToReview(ReviewInputError):
    """A change with no code in it to review: no file changes, or only binary files, deletions, renames,
    mode changes or empty files.
    Bad input for a diff file or a server's request; for ``memdoor review --base`` (a CI job, a
    pre-commit hook) a result: exit 0, saying so."""
