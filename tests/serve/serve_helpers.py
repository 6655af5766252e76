"""Helpers for the server tests: a real server in a thread, scripted and gated models, an OpenAI client.

Scripted models only drive the control flow; every candidate runs in the real sandbox, every request
goes over real HTTP on 127.0.0.1 through the official ``openai`` client.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import openai

from memdoor.core.messages import Completion, Message, ModelResponse, Usage
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.server.config import ServeConfig
from memdoor.server.launch import BackgroundServer

GOOD = "def add(a, b):\n    return a + b"
BAD = "def add(a, b):\n    return a - b"
ADD_PROMPT = "Write `add(a, b)` that returns the sum of a and b.\n\n>>> add(1, 2)\n3\n>>> add(2, 2)\n4\n"
"""A request with a named function and two examples (the team's public tests)."""
WAIT = 120.0
"""Generous timeout for anything a test waits for (never a timing assertion)."""


def fenced(code: str) -> str:
    return f"Here is the code.\n```python\n{code}\n```\n"


def scripted(spec: str, *answers: str, respond=None, **kw: Any) -> ScriptedModel:
    if respond is not None:
        return ScriptedModel(respond=respond, spec=spec, **kw)
    return ScriptedModel(list(answers), spec=spec, **kw)


class GatedModel:
    """A model whose calls wait until ``gate`` is set (a threading.Event the test controls).

    ``entered`` is set when the first call arrives; waiting is a cancellable poll, so a cancelled
    team stops at once.
    """

    def __init__(self, answer: str, *, spec: str = "gated"):
        self.spec = spec
        self.answer = answer
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.cancelled = threading.Event()
        self.calls = 0

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        n=1,
        temperature=0.2,
        max_tokens=1024,
        logprobs=False,
        seed=None,
        stop=None,
    ) -> ModelResponse:
        self.calls += 1
        self.entered.set()
        try:
            while not self.gate.is_set():
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return ModelResponse(
            model=self.spec,
            completions=[Completion(text=self.answer, logprobs=[-0.1] * 3 if logprobs else None)] * n,
            usage=Usage(prompt_tokens=10, completion_tokens=5),
        )

    async def aclose(self) -> None:
        return None


def pool_of(models: Mapping[str, Any]) -> ModelPool:
    pool = ModelPool()
    for spec, model in models.items():
        pool.add(spec, model)
    return pool


@contextlib.contextmanager
def running(
    known: Mapping[str, Any], sandbox, trace_dir: Path | None = None, **settings: Any
) -> Iterator[BackgroundServer]:
    """A real server on 127.0.0.1 (free port) in a thread; ``known`` maps specs to model objects,
    the team's specs (``models``) default to all of them."""
    settings.setdefault("models", list(known))
    config = ServeConfig(port=0, trace_dir=trace_dir, **settings)
    with BackgroundServer(config, pool=pool_of(known), sandbox=sandbox) as srv:
        yield srv


def client(srv: BackgroundServer, *, api_key: str = "unused", **kw: Any) -> openai.OpenAI:
    """The official client, without retries (so a 429 or 504 is seen as is)."""
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", WAIT)
    return openai.OpenAI(base_url=srv.base_url, api_key=api_key, **kw)


def health(srv: BackgroundServer) -> dict[str, Any]:
    return httpx.get(srv.base_url.removesuffix("/v1") + "/health", timeout=WAIT).json()


def wait_until(check: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


class InThread:
    """Run ``fn`` in a thread; ``result()`` joins and returns its value or raises its exception."""

    def __init__(self, fn: Callable[[], Any]):
        self._value: Any = None
        self._error: BaseException | None = None

        def target() -> None:
            try:
                self._value = fn()
            except BaseException as e:
                self._error = e

        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self, timeout: float = WAIT) -> Any:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError("the request did not finish")
        if self._error is not None:
            raise self._error
        return self._value


class Held:
    """``fn``, whose calls wait until ``gate`` is set (at most :data:`WAIT`); ``entered`` is set when a call
    comes. Held in place of a step of the server, it shows whether the event loop runs on meanwhile."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.entered = threading.Event()
        self.gate = threading.Event()

    def __call__(self, *args: Any, **kw: Any) -> Any:
        self.entered.set()
        self.gate.wait(WAIT)
        return self.fn(*args, **kw)


def health_meanwhile(srv: BackgroundServer) -> dict[str, Any]:
    """/health, waited for 60 s at most: less than a :class:`Held` step holds an event loop it runs on."""
    return httpx.get(srv.base_url.removesuffix("/v1") + "/health", timeout=60.0).json()


class ServerProcess:
    """``memdoor serve`` in a subprocess on a free port; the port is read from uvicorn's startup line."""

    def __init__(self, args: list[str], env: dict[str, str], **popen: Any):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdoor", "serve", "--port", "0", "--no-traces", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
            **popen,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.startup: list[str] = []
        """The lines written up to the one that names the port."""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.port = self._wait_port()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def _wait_port(self) -> int:
        seen = self.startup
        deadline = time.monotonic() + WAIT
        while True:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    raise AssertionError(f"memdoor serve did not start: {''.join(seen)}") from None
                continue
            seen.append(line)
            m = re.search(r"running on http://127\.0\.0\.1:(\d+)", line)
            if m:
                return int(m.group(1))

    def drained(self) -> list[str]:
        """The lines written so far that no one has taken yet."""
        out: list[str] = []
        while not self.lines.empty():
            out.append(self.lines.get())
        return out
