"""Retry decisions by exception type, backoff and bounds (with a recorded sleep and a fake clock)."""

from __future__ import annotations

import asyncio
import json
import random

import httpx2
import openai
import pytest

from memdoor.core.errors import ModelError, ModelTimeout, ModelUnavailable, RateLimited
from memdoor.models.openai_model import MalformedResponse, classify, retry_after_seconds
from memdoor.models.retry import (
    FailureKind,
    RetryConfig,
    Transient,
    backoff_delay,
    call_with_retries,
)

REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def status_error(cls: type[openai.APIStatusError], status: int, headers: dict[str, str] | None = None):
    response = httpx2.Response(
        status, headers=headers or {}, request=REQUEST, json={"error": {"message": "x"}}
    )
    return cls("x", response=response, body={"error": {"message": "x"}})


# ---- classification of what the openai package raises


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (status_error(openai.RateLimitError, 429), FailureKind.RATE_LIMITED),
        (status_error(openai.InternalServerError, 500), FailureKind.UNAVAILABLE),
        (status_error(openai.InternalServerError, 503), FailureKind.UNAVAILABLE),
        (status_error(openai.APIStatusError, 502), FailureKind.UNAVAILABLE),
        (status_error(openai.APIStatusError, 408), FailureKind.TIMEOUT),
        (openai.APITimeoutError(request=REQUEST), FailureKind.TIMEOUT),
        (TimeoutError(), FailureKind.TIMEOUT),
        (openai.APIConnectionError(request=REQUEST), FailureKind.UNAVAILABLE),
        (json.JSONDecodeError("Expecting value", "{", 1), FailureKind.UNAVAILABLE),
        (MalformedResponse("no choices"), FailureKind.UNAVAILABLE),
    ],
)
def test_transient_failures(exc, kind):
    t = classify(exc)
    assert t is not None
    assert t.kind is kind


@pytest.mark.parametrize(
    "exc",
    [
        status_error(openai.BadRequestError, 400),
        status_error(openai.AuthenticationError, 401),
        status_error(openai.PermissionDeniedError, 403),
        status_error(openai.NotFoundError, 404),
        status_error(openai.UnprocessableEntityError, 422),
        ValueError("a bug, not a server problem"),
        KeyError("model"),
        ModelError("already decided"),
    ],
)
def test_permanent_failures_are_not_retried(exc):
    assert classify(exc) is None


def test_retry_after_headers():
    assert classify(status_error(openai.RateLimitError, 429, {"Retry-After": "2"})).retry_after == 2.0
    assert classify(status_error(openai.RateLimitError, 429, {"retry-after-ms": "1500"})).retry_after == 1.5
    assert classify(status_error(openai.InternalServerError, 503, {"Retry-After": "7"})).retry_after == 7.0
    assert classify(status_error(openai.RateLimitError, 429)).retry_after is None
    # an HTTP date is not a number of seconds: fall back to backoff
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds({"retry-after": "-3"}) is None


# ---- backoff


def test_backoff_grows_and_is_capped_with_jitter():
    cfg = RetryConfig(backoff_base_s=1.0, backoff_max_s=8.0)
    rng = random.Random(0)
    for retry, full in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 8.0), (10, 8.0)]:
        delays = [backoff_delay(cfg, retry, rng) for _ in range(200)]
        assert all(full / 2 <= d <= full for d in delays)
        assert len(set(delays)) > 1  # jittered


def test_retry_after_is_honoured_and_capped():
    cfg = RetryConfig(backoff_base_s=0.01, retry_after_max_s=5.0)
    rng = random.Random(0)
    assert all(2.0 <= backoff_delay(cfg, 0, rng, 2.0) <= 2.2 for _ in range(100))
    assert all(backoff_delay(cfg, 0, rng, 120.0) == 5.0 for _ in range(10))
    assert backoff_delay(cfg, 3, rng, 0.0) == 0.0


# ---- the loop


class FakeTime:
    """A clock that only moves when the retry loop sleeps."""

    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def failing(*failures: BaseException, value: str = "done"):
    """An attempt function raising ``failures`` in turn, then returning ``value``; counts its calls."""
    calls = []

    async def attempt():
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return value

    return attempt, calls


def kind_of(exc: BaseException) -> Transient | None:
    return classify(exc)


async def test_success_after_transient_failures():
    t = FakeTime()
    attempt, calls = failing(
        status_error(openai.InternalServerError, 500),
        openai.APIConnectionError(request=REQUEST),
        status_error(openai.RateLimitError, 429, {"Retry-After": "3"}),
    )
    out = await call_with_retries(
        attempt,
        config=RetryConfig(backoff_base_s=1.0),
        classify=kind_of,
        what="m",
        sleep=t.sleep,
        clock=t.clock,
    )
    assert out.value == "done"
    assert out.retries == 3
    assert len(calls) == 4
    assert 0.5 <= t.sleeps[0] <= 1.0
    assert 1.0 <= t.sleeps[1] <= 2.0
    assert 3.0 <= t.sleeps[2] <= 3.3  # the server's Retry-After, not the backoff


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (status_error(openai.RateLimitError, 429), RateLimited),
        (openai.APITimeoutError(request=REQUEST), ModelTimeout),
        (status_error(openai.InternalServerError, 500), ModelUnavailable),
        (openai.APIConnectionError(request=REQUEST), ModelUnavailable),
    ],
)
async def test_exhausted_retries_raise_the_matching_error(exc, error):
    t = FakeTime()
    attempt, calls = failing(*[exc] * 10)
    with pytest.raises(error) as info:
        await call_with_retries(
            attempt,
            config=RetryConfig(max_retries=3),
            classify=kind_of,
            what="openai:m@http://h/v1",
            sleep=t.sleep,
            clock=t.clock,
        )
    assert len(calls) == 4
    assert len(t.sleeps) == 3
    assert info.value.retries == 3
    assert info.value.latency_s == pytest.approx(sum(t.sleeps))
    assert info.value.__cause__ is exc
    msg = str(info.value)
    assert msg.startswith("openai:m@http://h/v1: ")
    assert "gave up after 4 attempts" in msg
    assert "\n" not in msg


async def test_total_time_bound_stops_before_the_count_bound():
    t = FakeTime()
    attempt, calls = failing(*[status_error(openai.RateLimitError, 429, {"Retry-After": "10"})] * 100)
    cfg = RetryConfig(max_retries=100, max_total_retry_seconds=35, retry_after_max_s=60)
    with pytest.raises(RateLimited):
        await call_with_retries(attempt, config=cfg, classify=kind_of, what="m", sleep=t.sleep, clock=t.clock)
    # waits of 10-11 s each: a fourth would start later than 35 s after the first attempt
    assert len(t.sleeps) == 3
    assert len(calls) == 4
    assert t.now <= 35


async def test_permanent_failure_propagates_at_once():
    t = FakeTime()
    bad = status_error(openai.NotFoundError, 404)
    attempt, calls = failing(status_error(openai.InternalServerError, 500), bad)
    with pytest.raises(openai.NotFoundError) as info:
        await call_with_retries(
            attempt, config=RetryConfig(), classify=kind_of, what="m", sleep=t.sleep, clock=t.clock
        )
    assert info.value is bad
    assert len(calls) == 2


async def test_model_error_raised_by_an_attempt_carries_the_retries():
    t = FakeTime()
    attempt, _ = failing(openai.APIConnectionError(request=REQUEST), ModelError("HTTP 401"))
    with pytest.raises(ModelError) as info:
        await call_with_retries(
            attempt, config=RetryConfig(), classify=kind_of, what="m", sleep=t.sleep, clock=t.clock
        )
    assert info.value.retries == 1


async def test_zero_retries():
    t = FakeTime()
    attempt, calls = failing(status_error(openai.InternalServerError, 500))
    with pytest.raises(ModelUnavailable) as info:
        await call_with_retries(
            attempt,
            config=RetryConfig(max_retries=0),
            classify=kind_of,
            what="m",
            sleep=t.sleep,
            clock=t.clock,
        )
    assert len(calls) == 1
    assert t.sleeps == []
    assert "gave up after 1 attempt " in str(info.value)


async def test_cancellation_is_never_retried():
    calls = []

    async def attempt():
        calls.append(1)
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await call_with_retries(
            attempt, config=RetryConfig(), classify=lambda e: Transient(FailureKind.TIMEOUT, "x"), what="m"
        )
    assert len(calls) == 1
