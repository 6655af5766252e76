"""A fault-injecting HTTP proxy for tests: sits on 127.0.0.1 in front of a real server and breaks attempts.

Each request the proxy reads is one *attempt*. Its fault is taken, in order, from the script for its
prompt (the last message's content), then from the shared ``queue``, then ``always`` (default ``ok``):

- ``ok``: forward to the upstream server and relay its answer;
- ``429``: answer 429 with ``Retry-After: <retry_after>``;  ``500``: answer 500;
- ``slow``: wait ``slow_seconds`` (default: longer than any test runs), then forward;
- ``drop``: close the connection without answering;
- ``malformed``: 200, JSON content type, a broken JSON body;
- ``truncated``: forward, but send only half of the body (Content-Length unchanged), then close;
- ``html``: 200 with a ``text/html`` body (not JSON at all);  ``shape``: 200 with JSON that is no completion.

Every response closes its connection, so one connection = one attempt. Attempts are counted per prompt.
Runs its own asyncio loop in a background thread, so it is independent of the test's loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping

FAULTS = ("ok", "429", "500", "slow", "drop", "malformed", "truncated", "html", "shape")


class FaultProxy:
    def __init__(
        self,
        upstream_port: int,
        *,
        script: Mapping[str, Iterable[str]] | None = None,
        queue: Iterable[str] = (),
        always: str = "ok",
        retry_after: float = 0.05,
        slow_seconds: float = 600.0,
    ):
        self.upstream_port = upstream_port
        self._script = {k: deque(v) for k, v in (script or {}).items()}
        self._queue = deque(queue)
        self.always = always
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        for f in [*self._queue, always, *(f for v in self._script.values() for f in v)]:
            if f not in FAULTS:
                raise ValueError(f"unknown fault {f!r}")
        self._lock = threading.Lock()
        self.attempts: Counter[str] = Counter()
        self.faults_applied: Counter[str] = Counter()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def total_attempts(self) -> int:
        with self._lock:
            return sum(self.attempts.values())

    def _plan(self, prompt: str) -> str:
        with self._lock:
            self.attempts[prompt] += 1
            mine = self._script.get(prompt)
            if mine:
                fault = mine.popleft()
            elif self._queue:
                fault = self._queue.popleft()
            else:
                fault = self.always
            self.faults_applied[fault] += 1
            return fault

    def start(self) -> FaultProxy:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop)
        self._server = fut.result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length)
            fault = self._plan(_prompt_of(body))
            await self._apply(fault, head, body, writer)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # the proxy is stopping (a hung ``slow`` attempt, usually): end quietly
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, asyncio.CancelledError):
                pass

    async def _apply(self, fault: str, head: bytes, body: bytes, writer: asyncio.StreamWriter) -> None:
        if fault == "drop":
            return
        if fault == "429":
            writer.write(
                _response(
                    429,
                    b'{"error":{"message":"slow down","type":"rate_limit"}}',
                    extra=f"Retry-After: {self.retry_after}\r\n",
                )
            )
        elif fault == "500":
            writer.write(_response(500, b'{"error":{"message":"boom","type":"server_error"}}'))
        elif fault == "malformed":
            writer.write(_response(200, b'{"id": "x", "choices": [{"index": 0, "mess'))
        elif fault == "html":
            writer.write(_response(200, b"<html>502 Bad Gateway</html>", content_type="text/html"))
        elif fault == "shape":
            writer.write(_response(200, b'{"detail": "not a completion"}'))
        else:
            if fault == "slow":
                await asyncio.sleep(self.slow_seconds)
            status_and_headers, upstream_body = await self._forward(head, body)
            if fault == "truncated":
                writer.write(status_and_headers + upstream_body[: len(upstream_body) // 2])
            else:
                writer.write(status_and_headers + upstream_body)
        await writer.drain()

    async def _forward(self, head: bytes, body: bytes) -> tuple[bytes, bytes]:
        """Send the request upstream with ``Connection: close``; return (status line + headers, body)."""
        lines = head.split(b"\r\n")
        kept = [
            ln for ln in lines[1:] if ln and ln.split(b":")[0].strip().lower() not in (b"connection", b"host")
        ]
        request = b"\r\n".join(
            [
                lines[0],
                f"Host: 127.0.0.1:{self.upstream_port}".encode(),
                *kept,
                b"Connection: close",
                b"",
                b"",
            ]
        )
        r, w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        try:
            w.write(request + body)
            await w.drain()
            raw = await r.read()
        finally:
            w.close()
        upstream_head, _, upstream_body = raw.partition(b"\r\n\r\n")
        head_lines = [
            ln for ln in upstream_head.split(b"\r\n") if ln.split(b":")[0].strip().lower() != b"connection"
        ]
        return b"\r\n".join([*head_lines, b"Connection: close", b"", b""]), upstream_body


def _prompt_of(body: bytes) -> str:
    try:
        messages = json.loads(body).get("messages") or []
        return str(messages[-1].get("content", "")) if messages else ""
    except (ValueError, AttributeError):
        return ""


def _response(status: int, body: bytes, *, content_type: str = "application/json", extra: str = "") -> bytes:
    reason = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        f"{extra}Connection: close\r\n\r\n"
    )
    return head.encode() + body
