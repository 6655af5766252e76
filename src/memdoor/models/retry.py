"""Retries with exponential backoff and jitter, bounded in count and total time, decided by exception type.

A backend supplies a *classifier*: it maps an exception to a :class:`Transient` (retry it: rate
limited, timed out, or unavailable) or to ``None`` (not retryable: it propagates unchanged). When the
retries run out, :func:`call_with_retries` raises the matching :class:`memdoor.core.errors.ModelError`
subclass (:class:`~memdoor.core.errors.RateLimited`, :class:`~memdoor.core.errors.ModelTimeout`,
:class:`~memdoor.core.errors.ModelUnavailable`) with a one-line message, chained to the last failure, and
with ``retries`` and ``latency_s`` set on it so a ledger can record what the failed call cost.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from pydantic import BaseModel, Field

from memdoor.core.errors import ModelError, ModelTimeout, ModelUnavailable, RateLimited

T = TypeVar("T")


class RetryConfig(BaseModel):
    """How hard to retry a failing call. Every bound applies: whichever is reached first stops the retries."""

    max_retries: int = Field(
        default=5, ge=0, description="Retries after the first attempt (0 = never retry)."
    )
    backoff_base_s: float = Field(
        default=0.5, ge=0, description="Delay before the first retry; doubles each retry (before jitter)."
    )
    backoff_max_s: float = Field(default=30.0, ge=0, description="Cap on one backoff delay.")
    max_total_retry_seconds: float = Field(
        default=300.0,
        ge=0,
        description="Give up rather than start a retry that would begin later than this many seconds "
        "after the first attempt started.",
    )
    retry_after_max_s: float = Field(
        default=60.0, ge=0, description="Cap on a server's Retry-After: a longer wait is shortened to this."
    )


class FailureKind(Enum):
    """Why an attempt failed, as far as retrying is concerned."""

    RATE_LIMITED = "rate limited"
    TIMEOUT = "timed out"
    UNAVAILABLE = "unavailable"


ERROR_FOR_KIND: dict[FailureKind, type[ModelError]] = {
    FailureKind.RATE_LIMITED: RateLimited,
    FailureKind.TIMEOUT: ModelTimeout,
    FailureKind.UNAVAILABLE: ModelUnavailable,
}


@dataclass(frozen=True)
class Transient:
    """A retryable failure: its kind, a short detail for the final message, and the server's Retry-After."""

    kind: FailureKind
    detail: str
    retry_after: float | None = None


Classifier = Callable[[BaseException], "Transient | None"]


@dataclass(frozen=True)
class Retried(Generic[T]):
    """The value of a successful call and how many retries it took."""

    value: T
    retries: int


def backoff_delay(
    config: RetryConfig, retry: int, rng: random.Random, retry_after: float | None = None
) -> float:
    """Seconds to wait before retry number ``retry`` (0-based).

    With a Retry-After from the server: that many seconds (capped at ``retry_after_max_s``) plus up to
    10 % jitter so that many clients told the same do not come back together. Otherwise exponential
    backoff ``base * 2**retry`` capped at ``backoff_max_s``, with "equal jitter" (between half and all of it).
    """
    if retry_after is not None and retry_after >= 0:
        wait = min(retry_after, config.retry_after_max_s)
        return min(wait * (1 + 0.1 * rng.random()), config.retry_after_max_s)
    full = min(config.backoff_max_s, config.backoff_base_s * (2**retry))
    return full / 2 + rng.random() * full / 2


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    config: RetryConfig,
    classify: Classifier,
    what: str,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Retried[T]:
    """Run ``attempt()`` until it succeeds, retrying the failures ``classify`` calls transient.

    ``what`` names the call in the final error message (e.g. the model spec). Exceptions that
    ``classify`` maps to None propagate at once; cancellation always propagates.
    """
    rng = rng or random.Random()
    started = clock()
    retries = 0
    while True:
        try:
            return Retried(await attempt(), retries)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                if isinstance(exc, ModelError):
                    exc.retries = retries
                raise
            elapsed = clock() - started
            delay = backoff_delay(config, retries, rng, failure.retry_after)
            if retries >= config.max_retries or elapsed + delay > config.max_total_retry_seconds:
                raise _give_up(failure, what, retries, elapsed) from exc
        await sleep(delay)
        retries += 1


def _give_up(failure: Transient, what: str, retries: int, elapsed: float) -> ModelError:
    attempts = retries + 1
    err = ERROR_FOR_KIND[failure.kind](
        f"{what}: {failure.kind.value} ({failure.detail}); gave up after "
        f"{attempts} attempt{'s' if attempts != 1 else ''} in {elapsed:.1f} s"
    )
    err.retries = retries
    err.latency_s = elapsed
    return err
