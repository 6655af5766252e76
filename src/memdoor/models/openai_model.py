"""The ``openai`` backend: any OpenAI-compatible chat endpoint through the official ``openai`` package.

Spec: ``openai:MODEL@URL`` (``openai:Qwen/Qwen2.5-Coder-32B-Instruct@http://gpu-box:8000/v1``). Without
``@URL`` the base URL is ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``. The key comes from
``$MEMDOOR_API_KEY``, else (only for OpenAI or ``$OPENAI_BASE_URL``) ``$OPENAI_API_KEY``; local servers need none. Settings of
:class:`OpenAIConfig` may follow after ``?``, as for the ``local`` backend:
``openai:MODEL@http://gpu-box:8000/v1?concurrency=32&request_timeout_s=120&fan_out=always``.

The client's own retries are off (``max_retries=0``): :mod:`memdoor.models.retry` does all retrying,
decided by exception type. What the ``openai`` package raises, as found in its source and checked
against a real socket server:

- HTTP 429 → ``openai.RateLimitError``; 5xx → ``openai.InternalServerError`` (an ``APIStatusError``);
  other 4xx → other ``APIStatusError`` subclasses (never retried);
- no answer within the timeout → ``openai.APITimeoutError``;
- connection refused, dropped, or a body shorter than its Content-Length → ``openai.APIConnectionError``
  (caused by ``httpx2.RemoteProtocolError`` / ``ConnectError``);
- a JSON content type with an unparsable (malformed or empty) body → ``json.JSONDecodeError``, unwrapped;
- a non-JSON content type or JSON of the wrong shape → no exception at all (a ``str``, a ``list``, or a
  ``ChatCompletion`` whose ``choices`` is None), which this module turns into :class:`MalformedResponse`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

import openai
from pydantic import ConfigDict, Field, ValidationError

from memdoor.core.errors import ModelError, ModelSpecError, validation_problems
from memdoor.core.messages import Completion, Message, ModelResponse, Usage
from memdoor.core.net import is_loopback_url, redact_spec, scrub, split_model_url, split_options
from memdoor.models.gather import all_or_nothing
from memdoor.models.pool import ModelPool
from memdoor.models.retry import FailureKind, RetryConfig, Transient, call_with_retries

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_ENV_VARS = ("MEMDOOR_API_KEY", "OPENAI_API_KEY")


class OpenAIConfig(RetryConfig):
    """How the ``openai`` backend talks to an endpoint. Retry fields are those of :class:`RetryConfig`."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(
        default=8,
        ge=1,
        description="Requests in flight at once per endpoint (base URL). Shared by all models of one "
        "ModelPool on that endpoint; a fan-out of n requests counts n.",
    )
    request_timeout_s: float = Field(
        default=300.0,
        gt=0,
        description="Seconds one HTTP attempt may take, from sending to the last byte of the answer. "
        "Waiting for a concurrency slot does not count.",
    )
    fan_out: Literal["auto", "always", "never"] = Field(
        default="auto",
        description="How to get n completions. auto: ask for n in one request; if the server returns "
        "fewer (llama-cpp-python's server ignores n) or rejects the request (HTTP 400/422: llama.cpp's "
        "server refuses n above its slot count), request the rest one by one, and keep doing so for "
        "this model. always: n requests of one completion each (seeds seed, seed+1, ...). never: one "
        "request; return what the server gives.",
    )
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        default="max_tokens",
        description="Request field carrying the completion cap. OpenAI's reasoning models want "
        "max_completion_tokens; most compatible servers read max_tokens.",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra JSON fields sent with every request (server-specific options, e.g. top_k).",
    )


class RequestRejected(ModelError):
    """The endpoint refused the request with a client error (HTTP 4xx other than 408 and 429); not retried."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


FAN_OUT_AFTER = frozenset({400, 422})
"""Statuses of a rejected n > 1 request after which ``fan_out="auto"`` asks one completion at a time."""


class MalformedResponse(Exception):
    """The server answered 2xx with something that is not a chat completion (retried as unavailable)."""


@dataclass(frozen=True)
class ParsedSpec:
    """The parts of an ``openai:`` spec."""

    model: str
    base_url: str
    options: dict[str, str] = field(default_factory=dict)
    spec: str = ""

    def config(self, base: OpenAIConfig | None = None) -> OpenAIConfig:
        """``base`` (default settings when None) with the spec's options applied; ModelSpecError if bad."""
        if not self.options:
            return base or OpenAIConfig()
        merged = {**(base or OpenAIConfig()).model_dump(), **self.options}
        try:
            return OpenAIConfig.model_validate(merged)
        except ValidationError as e:
            problems = validation_problems(e)
            raise ModelSpecError(
                f"bad settings in model spec {redact_spec(self.spec)!r}: {problems}"
            ) from None


def parse_spec(rest: str, env: dict[str, str] | None = None) -> ParsedSpec:
    """``MODEL[@URL]`` → model and base URL. A :class:`ModelSpecError` with one clear line when it is bad."""
    env = dict(os.environ) if env is None else env
    example = "expected openai:MODEL@http(s)://HOST[:PORT]/v1 or openai:MODEL (then ?key=value&... settings)"
    spec = f"openai:{rest}"
    head, query = split_options(rest)
    if "@" in query:  # a password holding "?": its pieces would be named as settings
        raise ModelSpecError(
            f"bad model spec {redact_spec(spec)!r}: an '@' after '?' (write a '?' of a password as %3F); {example}"
        )
    try:
        options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=True)) if query else {}
    except ValueError:
        raise ModelSpecError(
            f"bad model spec {redact_spec(spec)!r}: cannot parse the settings after '?' (key=value&...)"
        ) from None
    model, url = split_model_url(head)
    if not model or any(c.isspace() for c in model):
        raise ModelSpecError(f"bad model spec {redact_spec(spec)!r}: empty or blank model name; {example}")
    if url is None:
        url = env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    return ParsedSpec(model=model, base_url=_check_url(url, spec, example), options=options, spec=spec)


def _check_url(url: str, spec: str, example: str) -> str:
    shown = redact_spec(spec)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ModelSpecError(f"bad model spec {shown!r}: cannot parse its URL; {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelSpecError(f"bad model spec {shown!r}: its URL is not http(s)://HOST...; {example}")
    if "#" in url:  # a password holding "#": the client would take what precedes it for the host
        raise ModelSpecError(f"bad model spec {shown!r}: a '#' in its URL (write a '#' of a password as %23)")
    return url.rstrip("/")


def endpoint_key(base_url: str) -> str:
    """The identity of an endpoint for concurrency limits: scheme, host, port and path, normalised."""
    p = urlsplit(base_url)
    port = p.port or (443 if p.scheme == "https" else 80)
    return f"{p.scheme}://{(p.hostname or '').lower()}:{port}{p.path.rstrip('/')}"


def api_key_from_env(base_url: str, env: dict[str, str] | None = None) -> str | None:
    """The key for ``base_url``: ``$MEMDOOR_API_KEY`` for any endpoint (the user set it for Memdoor);
    ``$OPENAI_API_KEY`` only for OpenAI itself or the endpoint named by ``$OPENAI_BASE_URL`` — an
    OpenAI key is never sent to another server just because a spec names it."""
    env = dict(os.environ) if env is None else env
    if env.get("MEMDOOR_API_KEY"):
        return env["MEMDOOR_API_KEY"]
    key = env.get("OPENAI_API_KEY")
    if not key:
        return None
    trusted = {"https://api.openai.com/v1", (env.get("OPENAI_BASE_URL") or "").rstrip("/")}
    return key if base_url.rstrip("/") in trusted else None


def classify(exc: BaseException) -> Transient | None:
    """Which failures to retry, by exception type only. None: not retryable (4xx, bugs)."""
    if isinstance(exc, openai.RateLimitError):
        return Transient(FailureKind.RATE_LIMITED, "HTTP 429", retry_after_seconds(exc.response.headers))
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return Transient(FailureKind.TIMEOUT, "no answer within the request timeout")
    if isinstance(exc, openai.APIConnectionError):
        return Transient(FailureKind.UNAVAILABLE, "connection failed or dropped")
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code == 408:
            return Transient(FailureKind.TIMEOUT, "HTTP 408")
        if exc.status_code >= 500:
            return Transient(
                FailureKind.UNAVAILABLE,
                f"HTTP {exc.status_code}",
                retry_after_seconds(exc.response.headers),
            )
        return None
    if isinstance(exc, json.JSONDecodeError):
        return Transient(FailureKind.UNAVAILABLE, "malformed JSON body")
    if isinstance(exc, MalformedResponse):
        return Transient(FailureKind.UNAVAILABLE, f"not a chat completion: {exc}")
    return None


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number of seconds); None when absent or a date."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


class OpenAIModel:
    """A chat model behind an OpenAI-compatible endpoint. Fits :class:`memdoor.core.protocols.Model`.

    ``slots`` is the endpoint's concurrency semaphore; without one the model makes its own with
    ``config.concurrency`` slots (a :class:`~memdoor.models.pool.ModelPool` shares one per endpoint).
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        config: OpenAIConfig | None = None,
        spec: str | None = None,
        *,
        slots: asyncio.Semaphore | None = None,
        rng: random.Random | None = None,
    ):
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.config = config or OpenAIConfig()
        self.spec = spec or f"openai:{model}@{self.base_url}"
        self.shown = redact_spec(self.spec)
        """The spec as answers, errors and logs show it (no password or key of its URL)."""
        self._slots = slots or asyncio.Semaphore(self.config.concurrency)
        self._rng = rng or random.Random()
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "EMPTY",
            base_url=self.base_url,
            max_retries=0,
            timeout=self.config.request_timeout_s,
            # a server on this machine is reached directly, never through a proxy from the environment
            http_client=openai.DefaultAsyncHttpxClient(trust_env=False)
            if is_loopback_url(self.base_url)
            else None,
        )
        self._fan_out_learned = False  # auto mode found that this server will not give n at once

    @classmethod
    def from_spec(cls, rest: str, config: OpenAIConfig | None = None) -> OpenAIModel:
        """``MODEL[@URL][?settings]``, key from the environment. Spec settings override ``config``."""
        p = parse_spec(rest)
        return cls(p.model, p.base_url, api_key_from_env(p.base_url), p.config(config), spec=f"openai:{rest}")

    @classmethod
    def from_spec_in_pool(cls, rest: str, pool: ModelPool) -> OpenAIModel:
        """Like :meth:`from_spec`, with the pool's ``openai`` config and its per-endpoint slots.

        The first model of the pool on an endpoint sets that endpoint's concurrency limit.
        """
        p = parse_spec(rest)
        config = p.config(pool.config_for("openai"))
        slots = pool.limits.slots(endpoint_key(p.base_url), config.concurrency)
        return cls(
            p.model, p.base_url, api_key_from_env(p.base_url), config, spec=f"openai:{rest}", slots=slots
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.2,
        max_tokens: int = 1024,
        logprobs: bool = False,
        seed: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> ModelResponse:
        """``n`` completions; Usage counts the prompt once and the completions of every request."""
        if n < 1:
            raise ModelError(f"{self.shown}: n must be at least 1, not {n}")
        started = time.perf_counter()
        base = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            self.config.max_tokens_field: max_tokens,
        }
        if logprobs:
            base["logprobs"] = True
        if stop:
            base["stop"] = list(stop)
        try:
            results = await self._requests(base, n, seed)
        except ModelError as e:
            e.latency_s = time.perf_counter() - started
            raise
        completions = [c for r in results for c in r.completions][:n]
        usage = Usage(
            prompt_tokens=max(r.prompt_tokens for r in results),
            completion_tokens=sum(r.completion_tokens for r in results),
            latency_s=time.perf_counter() - started,
            retries=sum(r.retries for r in results),
        )
        return ModelResponse(model=self.shown, completions=completions, usage=usage)

    async def _requests(self, base: dict[str, Any], n: int, seed: int | None) -> list[_Result]:
        mode = self.config.fan_out
        if n > 1 and (mode == "always" or (mode == "auto" and self._fan_out_learned)):
            return await self._fan_out(base, 0, n, seed)
        try:
            first = await self._one(base, n, seed)
        except RequestRejected as e:
            if n == 1 or mode != "auto" or e.status not in FAN_OUT_AFTER:
                raise
            # the server will not give n completions at once: one request each (the refusal counts as a retry)
            self._fan_out_learned = True
            results = await self._fan_out(base, 0, n, seed)
            results[0].retries += 1 + e.retries
            return results
        got = len(first.completions)
        if got >= n or mode == "never":
            return [first]
        self._fan_out_learned = True
        return [first, *await self._fan_out(base, got, n, seed)]

    async def _fan_out(self, base: dict[str, Any], start: int, n: int, seed: int | None) -> list[_Result]:
        """Completions ``start`` … ``n - 1``, one request each, concurrently, each with its own seed."""
        return await all_or_nothing([self._one(base, 1, _seed(seed, k)) for k in range(start, n)])

    async def _one(self, base: dict[str, Any], n: int, seed: int | None) -> _Result:
        """One logical request (retried as needed)."""
        body = dict(base)
        if n != 1:
            body["n"] = n
        if seed is not None:
            body["seed"] = seed
        outcome = await call_with_retries(
            lambda: self._attempt(body), config=self.config, classify=classify, what=self.shown, rng=self._rng
        )
        result = outcome.value
        result.retries = outcome.retries
        return result

    async def _attempt(self, body: dict[str, Any]) -> _Result:
        async with self._slots:
            try:
                async with asyncio.timeout(self.config.request_timeout_s):
                    raw = await self._client.chat.completions.create(
                        **body, extra_body=self.config.extra_body or None
                    )
            except openai.APIStatusError as e:
                if classify(e) is None:
                    raise RequestRejected(
                        _status_message(self.shown, e, self.base_url), e.status_code
                    ) from None
                raise
            except openai.OpenAIError as e:
                if classify(e) is None:
                    detail = _one_line(scrub(str(e), self.base_url))
                    raise ModelError(f"{self.shown}: {type(e).__name__}: {detail}") from e
                raise
        return _parse(raw)

    async def aclose(self) -> None:
        await self._client.close()


@dataclass
class _Result:
    completions: list[Completion]
    prompt_tokens: int
    completion_tokens: int
    retries: int = 0


def _seed(seed: int | None, k: int) -> int | None:
    """Each fanned-out request gets its own seed, or identical seeds would give identical samples."""
    return None if seed is None else seed + k


def _parse(raw: Any) -> _Result:
    """A ChatCompletion → completions and usage; :class:`MalformedResponse` if it is not one."""
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse(f"no choices in a {type(raw).__name__}")
    completions = []
    for ch in sorted(choices, key=lambda c: getattr(c, "index", 0) or 0):
        message = getattr(ch, "message", None)
        if message is None:
            raise MalformedResponse("a choice has no message")
        completions.append(
            Completion(
                text=getattr(message, "content", None) or "",
                finish_reason=getattr(ch, "finish_reason", None),
                logprobs=_token_logprobs(getattr(ch, "logprobs", None)),
            )
        )
    usage = getattr(raw, "usage", None)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    if all(c.logprobs is not None for c in completions):
        # one logprob per generated token: a floor for servers that count one choice only (llama.cpp, n > 1)
        completion_tokens = max(completion_tokens, sum(len(c.logprobs or ()) for c in completions))
    return _Result(
        completions=completions,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=completion_tokens,
    )


def _token_logprobs(lp: Any) -> list[float] | None:
    content = getattr(lp, "content", None)
    if not isinstance(content, list):
        return None
    values = [getattr(t, "logprob", None) for t in content]
    return [float(v) for v in values if isinstance(v, int | float)]


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _status_message(spec: str, e: openai.APIStatusError, base_url: str) -> str:
    """``spec`` (as shown): the status and the server's message (no secret of ``base_url`` in it)."""
    detail = e.message
    body = e.body
    if isinstance(body, dict):
        err = body.get("error", body)
        detail = err.get("message", detail) if isinstance(err, dict) else str(err)
    hint = ""
    if e.status_code in (401, 403):
        hint = f" (set {' or '.join(KEY_ENV_VARS)})"
    return f"{spec}: HTTP {e.status_code}: {_one_line(scrub(str(detail), base_url))}{hint}"
