"""Backend ``local``: an embedded GGUF code model on the CPU, offline, shared by every agent that names it.

Specs: ``local:qwen2.5-coder-0.5b`` or ``local:qwen2.5-coder-1.5b`` (weights from the ``local`` /
``local-1_5b`` extras, assembled and verified on first use), or ``local:/path/to/model.gguf`` for a
file of your own (not hash-checked). Engine settings may follow after ``?``:
``local:qwen2.5-coder-0.5b?slots=8&ctx=8192&threads=4`` (fields of :class:`EngineConfig`).

The engines start on the first call and stop in :meth:`LocalModel.aclose`. Calls may be made
concurrently; each of ``n`` completions is its own request (seed ``seed + k``). A model runs
``replicas`` engines (by default one single-threaded engine per core: see :mod:`memdoor.models.engine`)
and sends each request to the engine with the fewest requests in flight; each engine decodes up to
``slots`` of them in one batch and queues the rest. Requests go over loopback HTTP (about 2 ms more
than calling the engine's Python handle) because that lets a cancelled call free its slot: the engine
polls each waiting connection and stops generating once it is closed.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
from pydantic import ValidationError

from memdoor.core.errors import (
    ModelError,
    ModelSpecError,
    ModelTimeout,
    ModelUnavailable,
    validation_problems,
)
from memdoor.core.messages import Completion, Message, ModelResponse, Usage
from memdoor.models.catalog import CatalogEntry, get_entry
from memdoor.models.engine import Engine, EngineConfig
from memdoor.models.gather import all_or_nothing
from memdoor.models.weights import WeightsNotInstalled, WeightsStore, find_parts


class ContextOverflow(ModelError):
    """The prompt does not fit the engine's context per slot (raise ``ctx`` in the spec)."""


class LocalModel:
    """An embedded model fitting :class:`memdoor.core.protocols.Model`. One instance = one loaded engine.

    ``name`` is a catalog name (weights assembled into ``store``) or a path to a ``.gguf`` file.
    A catalog model whose weights are neither assembled nor installed fails here, before any work,
    with :class:`WeightsNotInstalled` naming the pip extra. ``catalog`` replaces the known models.
    """

    def __init__(
        self,
        name: str,
        *,
        config: EngineConfig | None = None,
        spec: str | None = None,
        store: WeightsStore | None = None,
        catalog: Mapping[str, CatalogEntry] | None = None,
    ):
        self.name = name
        self.config = config or EngineConfig()
        self.spec = spec or f"local:{name}"
        self._store = store
        self._path: Path | None = None
        if _is_path(name):
            self._path = Path(name).expanduser()
            if not self._path.is_file():
                raise ModelSpecError(f"local model file not found: {name}")
        else:
            self._entry = get_entry(name, catalog)  # ModelSpecError listing the known names
            self._check_installed()
        self._engines: list[Engine] = []
        self._lock = threading.Lock()  # guards engine start/stop (called from worker threads)
        self._clients: list[httpx.AsyncClient] = []
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._inflight: list[int] = []

    @classmethod
    def from_spec(cls, rest: str) -> LocalModel:
        """``NAME`` or ``NAME?key=value&...`` (keys: fields of :class:`EngineConfig`)."""
        name, _, query = rest.partition("?")
        if not name:
            raise ModelSpecError("local model spec needs a name, e.g. local:qwen2.5-coder-0.5b")
        options: dict[str, Any] = {}
        for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
            options[key] = value
        try:
            config = EngineConfig.model_validate(options)
        except ValidationError as e:
            problems = validation_problems(e)
            raise ModelSpecError(f"bad options in local:{rest}: {problems}") from None
        return cls(name, config=config, spec=f"local:{rest}")

    # -- lifecycle ------------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return bool(self._engines) and all(e.running for e in self._engines)

    @property
    def engines(self) -> list[Engine]:
        """The engines running now (empty before the first call and after :meth:`aclose`)."""
        return list(self._engines)

    def model_path(self) -> Path:
        """The GGUF file to load: assembled and verified on first use for catalog models (blocking)."""
        if self._path is not None:
            return self._path
        store = self._store or WeightsStore()
        return store.ensure(self._entry)

    def _check_installed(self) -> None:
        store = self._store or WeightsStore()
        if store.is_verified(self._entry):
            return
        parts = find_parts(self._entry)
        if not parts.complete:
            raise WeightsNotInstalled(
                f"weights of {self._entry.name} are not installed (missing {len(parts.missing)} of"
                f" {len(self._entry.parts)} part packages); install them with: {self._entry.install_hint}"
            )

    def _ensure_engines(self) -> list[Engine]:
        """Load the engines once (blocking; safe from any thread); all or none of them run."""
        with self._lock:
            if not self._engines:
                path = self.model_path()
                started: list[Engine] = []
                try:
                    for _ in range(self.config.n_replicas()):
                        # A fresh key per engine: only this process can use it, though it listens on loopback.
                        engine = Engine(path, self.config, api_key=secrets.token_urlsafe(24))
                        engine.start()
                        started.append(engine)
                except BaseException:
                    for engine in started:
                        engine.stop()
                    raise
                self._engines = started
            return list(self._engines)

    async def start(self) -> list[httpx.AsyncClient]:
        """Start the engines now (otherwise the first call does); returns their clients for this event loop."""
        loop = asyncio.get_running_loop()
        if self._clients and self._client_loop is loop and self.started:
            return self._clients
        engines = await asyncio.to_thread(self._ensure_engines)
        if not self._clients or self._client_loop is not loop:
            # An httpx client belongs to one event loop; the engines serve them all.
            limit = self.config.max_connections()
            self._clients = [
                httpx.AsyncClient(
                    base_url=e.base_url or "",
                    headers=e.headers(),
                    timeout=httpx.Timeout(self.config.timeout, connect=30.0, pool=None),
                    limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
                    trust_env=False,  # loopback only: never route through a proxy from the environment
                )
                for e in engines
            ]
            self._inflight = [0] * len(engines)
            self._client_loop = loop
        return self._clients

    async def aclose(self) -> None:
        """Close the connections and stop the engines (frees the model's memory). The next call restarts them."""
        clients, loop = self._clients, self._client_loop
        self._clients, self._client_loop, self._inflight = [], None, []
        if loop is asyncio.get_running_loop():
            for client in clients:
                await client.aclose()
        await asyncio.to_thread(self._stop_engines)

    def _stop_engines(self) -> None:
        with self._lock:
            engines, self._engines = self._engines, []
            for engine in engines:
                engine.stop()

    # -- calls ----------------------------------------------------------------------------------------

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
        if n < 1:
            raise ModelError(f"n must be at least 1, got {n}")
        clients = await self.start()
        started = time.perf_counter()
        body: dict[str, Any] = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            "cache_prompt": True,
        }
        if logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 1  # the sampled token's logprob only; 0 would turn logprobs off
        if stop:
            body["stop"] = list(stop)
        bodies = []
        for k in range(n):
            b = dict(body)
            if seed is not None:
                b["seed"] = seed + k
            bodies.append(b)
        answers = await all_or_nothing([self._post(clients, b) for b in bodies])
        completions = [_completion(a, logprobs) for a in answers]
        prompt_tokens = max((_usage(a, "prompt_tokens") for a in answers), default=0)
        completion_tokens = sum(_usage(a, "completion_tokens") for a in answers)
        return ModelResponse(
            model=self.spec,
            completions=completions,
            usage=Usage(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                latency_s=time.perf_counter() - started,
            ),
        )

    async def _post(self, clients: list[httpx.AsyncClient], body: dict[str, Any]) -> dict[str, Any]:
        """One request, to the engine with the fewest requests in flight (the first among equals)."""
        inflight = self._inflight
        i = min(range(len(clients)), key=lambda k: inflight[k])
        inflight[i] += 1
        try:
            return await self._post_to(clients[i], body)
        finally:
            inflight[i] -= 1

    async def _post_to(self, client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
        try:
            resp = await client.post("/v1/chat/completions", json=body)
        except httpx.TimeoutException as e:
            raise ModelTimeout(
                f"{self.spec}: no answer within {self.config.timeout:g} s ({type(e).__name__})"
            ) from None
        except httpx.TransportError as e:
            raise ModelUnavailable(f"{self.spec}: the embedded engine dropped the request: {e!r}") from None
        try:
            data = resp.json()
        except ValueError:
            raise ModelUnavailable(
                f"{self.spec}: the embedded engine answered HTTP {resp.status_code} with no JSON"
            ) from None
        if resp.status_code != 200 or not isinstance(data, dict) or "error" in data:
            raise _error(self.spec, resp.status_code, data)
        return data


def _is_path(name: str) -> bool:
    return name.endswith(".gguf") or "/" in name


def _usage(answer: dict[str, Any], key: str) -> int:
    usage = answer.get("usage") or {}
    value = usage.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0


def _completion(answer: dict[str, Any], want_logprobs: bool) -> Completion:
    try:
        choice = answer["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelUnavailable("the embedded engine answered without a choice") from None
    lps: list[float] | None = None
    if want_logprobs:
        content = (choice.get("logprobs") or {}).get("content") or []
        lps = [float(t["logprob"]) for t in content if isinstance(t, dict) and "logprob" in t]
    return Completion(text=text, finish_reason=choice.get("finish_reason"), logprobs=lps)


def _error(spec: str, status: int, data: Any) -> ModelError:
    err = data.get("error") if isinstance(data, dict) else None
    err = err if isinstance(err, dict) else {}
    message = err.get("message") or f"HTTP {status}"
    if err.get("type") == "exceed_context_size_error":
        return ContextOverflow(
            f"{spec}: prompt of {err.get('n_prompt_tokens', '?')} tokens does not fit the context of"
            f" {err.get('n_ctx', '?')} tokens per slot; use a larger one, e.g. {spec.split('?')[0]}?ctx=8192"
        )
    if status >= 500 or status == 0:
        return ModelUnavailable(f"{spec}: the embedded engine failed: {message}")
    return ModelError(f"{spec}: the embedded engine rejected the request: {message}")
