"""Paired draws: a model request that several rows of one bench run make identically is computed once.

A request is identified by its model spec, messages, sampling settings (n, temperature, max_tokens,
logprobs, seed, stop) and its *repeat index*: the k-th identical request within one (problem, row)
run is a draw of its own, so a strategy that asks the same thing twice still gets two draws. Every
row of a run sees the same draw for the same key — common random numbers, so rows differ only by what
their strategy does with the drafts (``single`` is agent 0's first draft; ``parallel:5``,
``hybrid:5`` and ``shared:5`` start from the same five drafts).

- a key already computed (in this session or an earlier one: calls are kept in the run's store) is
  replayed;
- a key being computed by another row is awaited (one in flight, the others wait for it);
- a key an earlier run computed (``donor``: ``memdoor bench --calls-from DIR``, e.g. a run over the
  same problems before their loader changed) is adopted into this run's store and replayed;
- otherwise the call is made and stored at once.

A replayed response carries the usage of the call that computed it (tokens, latency), so each row is
charged the full cost of every call it made, as if it had run alone. With ``pace`` (the bench's
default) a replay also takes the call's recorded latency (a sleep for what is left of it, which costs
no compute), so a row's wall seconds stay what they would have been alone and rows stay comparable
in seconds too. Failed calls are not stored (they are retried by whoever asks next).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

from memdoor.core.messages import Message, ModelResponse
from memdoor.core.protocols import Model
from memdoor.models.pool import ModelPool

SaveCall = Callable[[str, str, ModelResponse], None]
"""Keeps one computed call: (key, model spec, response)."""


def request_digest(spec: str, messages: Sequence[Message], settings: Mapping[str, object]) -> str:
    """SHA-256 of a request: model spec, messages and sampling settings (order-independent JSON)."""
    doc = {"model": spec, "messages": [dict(m) for m in messages], **settings}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Draws:
    """The calls of one bench run, shared by every row and every pair (not global: one per run)."""

    def __init__(
        self,
        stored: Mapping[str, ModelResponse] | None = None,
        save: SaveCall | None = None,
        *,
        pace: bool = False,
        donor: Mapping[str, tuple[str, ModelResponse]] | None = None,
    ):
        self._done: dict[str, ModelResponse] = dict(stored or {})
        self._pace = pace
        self._donor = dict(donor or {})
        """Calls an earlier run computed (key → (spec, response)): one asked for is adopted, kept in this
        run's store like a computed one and replayed (its recorded usage and latency charged as usual)."""
        self._inflight: dict[str, asyncio.Future[ModelResponse]] = {}
        self._save = save
        self.computed = 0
        """Calls computed by this session."""
        self.replayed = 0
        """Calls answered from a stored or in-flight draw."""
        self.adopted = 0
        """Calls taken from the donor run (then replayed)."""

    def __len__(self) -> int:
        return len(self._done)

    async def get(
        self, key: str, compute: Callable[[], Awaitable[ModelResponse]], spec: str = ""
    ) -> ModelResponse:
        """The response of ``key``: stored, awaited from the row computing it, or computed here."""
        started = time.monotonic()
        if key not in self._done and key in self._donor:
            spec_of, response = self._donor.pop(key)
            self._done[key] = response
            self.adopted += 1
            if self._save is not None:
                self._save(key, spec_of, response)
        while True:
            if key in self._done:
                return await self._replay(self._done[key], started)
            pending = self._inflight.get(key)
            if pending is None:
                return await self._compute(key, compute, spec)
            try:
                response = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # we were cancelled ourselves
                continue  # the row computing it was cancelled: compute it here
            return await self._replay(response, started)

    async def _replay(self, response: ModelResponse, started: float) -> ModelResponse:
        self.replayed += 1
        if self._pace:
            left = response.usage.latency_s - (time.monotonic() - started)
            if left > 0:
                await asyncio.sleep(left)
        return response.model_copy(deep=True)

    async def _compute(
        self, key: str, compute: Callable[[], Awaitable[ModelResponse]], spec: str
    ) -> ModelResponse:
        future: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            response = await compute()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waited
            raise
        finally:
            self._inflight.pop(key, None)
        self._done[key] = response
        self.computed += 1
        if self._save is not None:
            self._save(key, spec or response.model, response)
        future.set_result(response)
        return response.model_copy(deep=True)


class PairedModel:
    """One (problem, row) run's view of a shared model: every call goes through the run's draws."""

    def __init__(self, model: Model, spec: str, draws: Draws, repeats: Counter[str]):
        self._model = model
        self.spec = spec
        self._draws = draws
        self._repeats = repeats

    async def complete(
        self, messages, *, n=1, temperature=0.2, max_tokens=1024, logprobs=False, seed=None, stop=None
    ) -> ModelResponse:
        settings = {
            "n": n,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "logprobs": logprobs,
            "seed": seed,
            "stop": list(stop) if stop else None,
        }
        digest = request_digest(self.spec, messages, settings)
        repeat = self._repeats[digest]
        self._repeats[digest] += 1

        def compute() -> Awaitable[ModelResponse]:
            return self._model.complete(
                messages,
                n=n,
                temperature=temperature,
                max_tokens=max_tokens,
                logprobs=logprobs,
                seed=seed,
                stop=stop,
            )

        return await self._draws.get(f"{digest}:{repeat}", compute, self.spec)

    async def aclose(self) -> None:
        """Nothing: the shared model belongs to the bench's pool, which closes it."""


def paired_pool(
    pool: ModelPool, specs: Iterable[str], draws: Draws, raw_of: Mapping[str, str] | None = None
) -> ModelPool:
    """A pool for one (problem, row) run: ``specs`` opened from ``pool`` and wrapped in the run's
    draws, with one repeat counter for the whole run. A spec shown without its secrets is opened from its
    raw form in ``raw_of`` (shown → raw: :func:`memdoor.bench.config.hide_secrets`) and keeps its shown
    form everywhere else (the calls' keys and records, the ledger)."""
    raw_of = raw_of or {}
    paired = ModelPool()
    repeats: Counter[str] = Counter()
    for spec in dict.fromkeys(specs):
        paired.add(spec, PairedModel(pool.get(raw_of.get(spec, spec)), spec, draws, repeats))
    return paired
