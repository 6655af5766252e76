"""Connection limits of ``memdoor serve``: idle, header and body timeouts, and a cap on open connections.

uvicorn closes a kept-alive connection after a response, but not one that never sends a request, nor
one that sends its headers a byte a second (slowloris), and it accepts connections until the process
runs out of file descriptors. :class:`GuardedProtocol` is uvicorn's HTTP/1.1 protocol (h11) with
deadlines on every phase before the application runs:

- **waiting, silent**: a connection that sends nothing (new, or kept alive between requests) is closed
  after ``idle_timeout_s``;
- **waiting, started**: the whole request head must have arrived ``header_timeout_s`` after the
  connection began waiting for it; else 408 and closed;
- **body**: the whole body must have arrived ``body_timeout_s`` after the head; else 408 and closed
  (the application sees a client that left);
- **answers not read**: a connection whose answers the client does not read (the transport paused for
  writing: kernel buffers and uvicorn's own are full) is closed — aborted, its unsent bytes dropped —
  after ``write_timeout_s`` paused. Without it a client pipelining thousands of ``GET /health`` and
  never reading would hold its connection, "running" and never closed to make room, for ever.

Once a request is read, the application's own limits apply (``timeout_s``). :class:`ConnectionGuard`
caps the open connections at ``max_connections``: a new connection above the cap closes the one that
has been longest waiting for its request or receiving its body (an idle or slow client), or, when every
connection is busy with a request the application is answering, is answered 503 and closed at once.
So a flood of idle or slow connections cannot keep ``/health`` (or any real client) out. Every close is logged through the server's log, where repeats are summarized
(:mod:`memdoor.server.logsummary`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_remote_addr

LOG = "uvicorn.error"
"""The server's log (uvicorn's), where connection events go."""

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 47\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    b"server busy: too many open connections, retry\r\n"
)
TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 30\r\nconnection: close\r\n\r\n"
    b"request not received in time\r\n"
)


def _peer(addr: tuple[str, int] | None) -> str:
    return f"{addr[0]}:{addr[1]}" if addr else "a client"


class ConnectionGuard:
    """The server-wide connection state: open connections, and those still reading a request — waiting
    for its head or receiving its body — longest in that phase first."""

    def __init__(
        self,
        *,
        max_connections: int,
        idle_timeout_s: float,
        header_timeout_s: float,
        body_timeout_s: float,
        write_timeout_s: float,
    ):
        self.max_connections = max_connections
        self.idle_timeout_s = idle_timeout_s
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.write_timeout_s = write_timeout_s
        self.open: set[GuardedProtocol] = set()
        self.reading: dict[GuardedProtocol, None] = {}  # insertion order: longest in its phase first
        self.log = logging.getLogger(LOG)

    def admit(self, conn: GuardedProtocol) -> bool:
        """Count ``conn`` in, closing the connection longest in a reading phase if the cap is reached;
        False when every open connection is busy with a request (``conn`` must then be refused)."""
        if len(self.open) >= self.max_connections:
            if not self.reading:
                return False
            oldest = next(iter(self.reading))
            self.log.warning(
                "closed the connection of %s, which had sent no complete request, to make room "
                "(%d open connections, the cap)",
                _peer(oldest.client),
                len(self.open),
            )
            oldest.drop()
        self.open.add(conn)
        return True

    def set_reading(self, conn: GuardedProtocol, reading: bool) -> None:
        """``conn`` begins (True) a phase in which it may be closed to make room, or a phase in which not."""
        self.reading.pop(conn, None)
        if reading and conn in self.open:
            self.reading[conn] = None

    def forget(self, conn: GuardedProtocol) -> None:
        self.open.discard(conn)
        self.reading.pop(conn, None)


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the cap of a :class:`ConnectionGuard`."""

    def __init__(self, *args: Any, guard: ConnectionGuard, **kw: Any):
        super().__init__(*args, **kw)
        self.guard = guard
        self._refused = False
        self._phase = ""  # "waiting", "body", "running" or "" (closed)
        self._since = 0.0  # when the current phase began
        self._heard = False  # a byte of the awaited request has arrived
        self._timer: asyncio.TimerHandle | None = None
        self._unread: asyncio.TimerHandle | None = None  # closes the connection if writing stays paused

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self.guard.admit(self):
            self._refused = True
            self.transport = transport
            self.guard.log.warning(
                "refused a connection from %s with 503: every one of the %d open connections is busy",
                _peer(get_remote_addr(transport)),
                len(self.guard.open),
            )
            transport.write(BUSY)
            transport.close()
            return
        super().connection_made(transport)
        self._update()

    def connection_lost(self, exc: Exception | None) -> None:
        self._set_timer(None)
        self._stop_unread()
        self._phase = ""
        self.guard.forget(self)
        if not self._refused:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._heard = True
        super().data_received(data)
        self._update()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._unread is None and not self._refused:
            self._unread = self.loop.call_later(self.guard.write_timeout_s, self._not_reading)

    def resume_writing(self) -> None:
        self._stop_unread()
        super().resume_writing()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._update()

    # the guard
    def drop(self, answer: bytes = b"") -> None:
        """Close now (with ``answer`` first when no response has started); forgotten by the guard at once."""
        self._set_timer(None)
        self.guard.forget(self)
        if not self.transport.is_closing():
            if answer and (self.cycle is None or not self.cycle.response_started or self._phase == "waiting"):
                self.transport.write(answer)
            self.transport.close()

    def _stop_unread(self) -> None:
        if self._unread is not None:
            self._unread.cancel()
            self._unread = None

    def _not_reading(self) -> None:
        """Writing has stayed paused ``write_timeout_s``: the client does not read its answers. Aborted
        (a close would wait for the unsent bytes for ever); the application sees a client that left."""
        self._unread = None
        self.guard.log.warning(
            "closed the connection of %s: it had not read its answers for %g s",
            _peer(self.client),
            self.guard.write_timeout_s,
        )
        self._set_timer(None)
        self.guard.forget(self)
        self.transport.abort()

    def _current_phase(self) -> str:
        theirs, ours = self.conn.their_state, self.conn.our_state
        if self.transport.is_closing() or theirs in (h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            return ""
        if theirs is h11.IDLE and ours is h11.IDLE:
            return "waiting"
        if theirs is h11.SEND_BODY:
            return "body"
        return "running"

    def _update(self) -> None:
        """Follow the request's phase: restart the clock on a new phase, and re-arm the deadline."""
        phase = self._current_phase()
        if phase != self._phase:
            self._phase, self._since = phase, self.loop.time()
            self._heard = phase == "waiting" and bool(self.conn.trailing_data[0])
            self.guard.set_reading(self, phase in ("waiting", "body"))
        self._set_timer(self._deadline())

    def _deadline(self) -> float | None:
        if self._phase == "waiting":
            wait = self.guard.header_timeout_s if self._heard else self.guard.idle_timeout_s
        elif self._phase == "body":
            wait = self.guard.body_timeout_s
        else:
            return None
        return self._since + wait

    def _set_timer(self, deadline: float | None) -> None:
        if self._timer is not None and (deadline is None or self._timer.when() != deadline):
            self._timer.cancel()
            self._timer = None
        if deadline is not None and self._timer is None:
            self._timer = self.loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        self._timer = None
        deadline = self._deadline()
        if deadline is None:
            return
        if self.loop.time() < deadline:
            self._set_timer(deadline)
            return
        if self._phase == "waiting" and not self._heard:
            self.drop()  # silent: closed as a kept-alive connection is, without a line in the log
            return
        what = "request head" if self._phase == "waiting" else "request body"
        limit = self.guard.header_timeout_s if self._phase == "waiting" else self.guard.body_timeout_s
        self.guard.log.warning(
            "closed the connection of %s with 408: its %s had not arrived after %g s",
            _peer(self.client),
            what,
            limit,
        )
        self.drop(TIMED_OUT)
