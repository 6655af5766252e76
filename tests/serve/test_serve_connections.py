"""Hostile connections against a real server over real sockets on 127.0.0.1: idle and slow clients are
cut at their timeouts, a flood of connections cannot keep ``/health`` out, a client that leaves
mid-request leaves no traceback, and repeated errors are logged once with a count.

Timeouts are small (1-2 s) and every wait is generous: nothing here asserts how fast the server is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import logging
import os
import re
import resource
import selectors
import signal
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from serve_helpers import (
    ADD_PROMPT,
    GOOD,
    WAIT,
    GatedModel,
    ServerProcess,
    fenced,
    health,
    running,
    user,
    wait_until,
)

from memdoor.cli import main
from memdoor.commands.serve import build_config, configure
from memdoor.server.connections import LOG
from memdoor.server.logsummary import RepeatSummary

BOUND = 30.0
"""How long a test lets the server take to close a connection it must close (timeouts here are 1-2 s)."""


class Records(logging.Handler):
    """The records of the server's loggers (those its summary lets through), from attach to detach."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._loggers = [logging.getLogger(LOG), logging.getLogger("asyncio")]

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> Records:
        for logger in self._loggers:
            logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for logger in self._loggers:
            logger.removeHandler(self)

    def lines(self, part: str) -> list[str]:
        return [r.getMessage() for r in self.records if part in r.getMessage()]

    def tracebacks(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.exc_info]


@pytest.fixture
def gated() -> Iterator[GatedModel]:
    model = GatedModel(fenced(GOOD), spec="gated")
    yield model
    model.gate.set()  # never leave a team waiting


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT)


def until_closed(socks: list[socket.socket], bound: float = BOUND) -> dict[socket.socket, bytes]:
    """What the server sent on each socket before closing it; AssertionError if some stay open past ``bound``."""
    got = {s: b"" for s in socks}
    with selectors.DefaultSelector() as sel:
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        deadline = time.monotonic() + bound
        while sel.get_map():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{len(sel.get_map())} of {len(socks)} connections still open after {bound:g} s"
                )
            for key, _ in sel.select(timeout=0.2):
                s = key.fileobj
                try:
                    data = s.recv(65536)
                except ConnectionResetError:
                    data = b""
                if data:
                    got[s] += data
                else:
                    sel.unregister(s)
    return got


def logged_count(log: Records, part: str) -> int:
    """Events whose lines contain ``part``: one per line in full, N per "(… N more in the last W s)"."""
    total = 0
    for line in log.lines(part):
        m = re.search(r"… ([\d,]+) more in the last", line)
        total += int(m.group(1).replace(",", "")) if m else 1
    return total


def health_ok(port: int) -> bool:
    r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=BOUND)
    return r.status_code == 200 and r.json()["status"] == "ok"


def request_head(body: bytes, *, path: str = "/v1/chat/completions") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()


def chat_body(stream: bool = False) -> bytes:
    return json.dumps({"model": "memdoor/single", "messages": user(ADD_PROMPT), "stream": stream}).encode()


def test_silent_connections_are_closed_after_the_idle_timeout(sandbox, gated):
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], idle_timeout_s=1.0) as srv:
        silent = [connect(srv.port) for _ in range(200)]
        kept_alive = connect(srv.port)  # one request, then silence
        kept_alive.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        got = until_closed([*silent, kept_alive])
        assert all(got[s] == b"" for s in silent)  # closed without a word
        assert got[kept_alive].startswith(b"HTTP/1.1 200 ")
        assert health_ok(srv.port)


@contextlib.contextmanager
def trickling(socks: list[socket.socket], first: bytes) -> Iterator[None]:
    """Send ``first`` on every socket, then (in a thread) one byte on each every 0.25 s until the block
    ends or the socket is closed."""
    for s in socks:
        s.sendall(first)
    stop = threading.Event()

    def send() -> None:
        alive = list(socks)
        while alive and not stop.wait(0.25):
            for s in list(alive):
                try:
                    s.send(b"a")
                except OSError:
                    alive.remove(s)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        yield
    finally:
        stop.set()
        sender.join(WAIT)


def test_headers_sent_a_byte_at_a_time_are_cut_at_the_header_timeout(sandbox, gated):
    settings = {"idle_timeout_s": 1.0, "header_timeout_s": 1.5}
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv, Records() as log:
        slow = [connect(srv.port) for _ in range(50)]
        with trickling(slow, b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "):
            assert health_ok(srv.port)  # answered while the slow ones trickle
            got = until_closed(slow)
        assert all(data.startswith(b"HTTP/1.1 408 ") for data in got.values())
        assert log.lines("request head had not arrived after 1.5 s")
        assert not log.tracebacks()


def test_a_body_sent_a_byte_at_a_time_is_cut_at_the_body_timeout(sandbox, gated):
    settings = {"body_timeout_s": 1.5}
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv, Records() as log:
        body = chat_body()
        slow = [connect(srv.port) for _ in range(20)]
        with trickling(slow, request_head(body) + b"{"):
            got = until_closed(slow)
        assert all(data.startswith(b"HTTP/1.1 408 ") for data in got.values())
        assert log.lines("request body had not arrived after 1.5 s")
        assert not log.tracebacks()
        assert gated.calls == 0  # no team ran on a body that never came


def test_a_client_that_leaves_mid_request_leaves_no_traceback(sandbox, gated):
    with running({"gated": gated}, sandbox, teams=["memdoor/single"]) as srv, Records() as log:
        body = chat_body()
        for cut in (10, len(body) // 2, len(body) - 1):  # mid-body, at several points
            s = connect(srv.port)
            s.sendall(request_head(body) + body[:cut])
            time.sleep(0.2)  # the application is reading the body
            s.close()
        waiting = connect(srv.port)  # a whole request, then gone while its team works
        waiting.sendall(request_head(body) + body)
        assert gated.entered.wait(WAIT)
        waiting.close()
        wait_until(lambda: gated.cancelled.is_set(), "the team of the client that left to stop")
        streamed = connect(srv.port)  # a stream, then gone mid-answer
        gated.entered.clear()
        streamed.sendall(request_head(chat_body(stream=True)) + chat_body(stream=True))
        assert streamed.recv(100).startswith(b"HTTP/1.1 200 ")
        streamed.close()
        gated.gate.set()
        wait_until(lambda: health(srv) == {"status": "ok", "running": 0, "waiting": 0}, "every team to end")
    assert not log.tracebacks(), log.tracebacks()
    assert not log.lines("Exception in ASGI application")


def test_connections_above_the_cap_when_all_are_busy_are_refused_and_logged_once_with_a_count(sandbox, gated):
    settings = {"max_connections": 3, "concurrency": 1, "max_queue": 4, "log_repeat_window_s": 2.0}
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv, Records() as log:
        body = chat_body()
        busy = [connect(srv.port) for _ in range(3)]
        for s in busy:
            s.sendall(request_head(body) + body)  # three requests waiting for the team: none can be closed
        assert gated.entered.wait(WAIT)
        # all three read and in the application, none reading a request (/health would take a 4th)
        guard = srv.server.guard
        wait_until(lambda: len(guard.open) == 3 and not guard.reading, "three busy connections")
        refused = [connect(srv.port) for _ in range(100)]
        got = until_closed(refused)
        assert all(data.startswith(b"HTTP/1.1 503 ") for data in got.values())
        wait_until(lambda: logged_count(log, "refused a connection") == 100, "the count of the 100 refusals")
        refusals = log.lines("refused a connection")
        assert len(refusals) <= 10, refusals  # the first in full, then counts, not one line each
        assert "more in the last" in refusals[-1]
        gated.gate.set()
        answers = until_closed(busy)  # the busy ones were served
        assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers.values())


def test_a_flood_of_idle_connections_cannot_keep_health_out(sandbox, gated):
    settings = {
        "max_connections": 50,
        "idle_timeout_s": 60.0,
        "header_timeout_s": 60.0,
        "log_repeat_window_s": 60.0,
    }
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv, Records() as log:
        flood = [connect(srv.port) for _ in range(500)]
        closed = until_closed(flood[:400])  # the oldest made room for the newer ones
        assert all(data == b"" for data in closed.values())
        assert health_ok(srv.port)
        assert len(srv.server.guard.open) <= 50
        assert len(log.lines("to make room")) == 1  # once in full; the count comes when the window ends
        for s in flood:
            s.close()


def test_a_flood_of_slow_bodies_cannot_keep_health_out(sandbox, gated):
    settings = {"max_connections": 20, "body_timeout_s": 60.0, "log_repeat_window_s": 60.0}
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv, Records() as log:
        body = chat_body()
        slow = [connect(srv.port) for _ in range(60)]
        with trickling(slow, request_head(body) + b"{"):
            closed = until_closed(slow[:30])  # the oldest made room for the newer ones
            assert health_ok(srv.port)
        assert all(data == b"" for data in closed.values())
        assert len(log.lines("to make room")) == 1
        assert not log.tracebacks()
        assert gated.calls == 0


def never_reading(port: int, requests: bytes) -> socket.socket:
    """A connection that sends ``requests`` (pipelined, from a thread) and never reads an answer."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # small buffers fill sooner
    s.settimeout(WAIT)
    s.connect(("127.0.0.1", port))

    def send() -> None:
        with contextlib.suppress(OSError):  # the server closed it
            s.sendall(requests)

    threading.Thread(target=send, daemon=True).start()
    return s


def test_connections_that_never_read_their_answers_are_closed_at_the_write_timeout(sandbox, gated):
    """Pipelined requests whose answers are never read: the server's writing pauses, the request being
    answered waits for ever, and the connection is not one that may be closed to make room. At the cap,
    without the write timeout, every new connection (/health too) got 503 for as long as they stayed.
    The answers are long 404s (a long model id), so that a few thousand fill every buffer."""
    settings = {"max_connections": 3, "write_timeout_s": 1.0, "log_repeat_window_s": 1.0}
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv, Records() as log:
        one = f"GET /v1/models/{'m' * 7000} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode()
        hogs = [never_reading(srv.port, one * 1500) for _ in range(3)]
        wait_until(
            lambda: logged_count(log, "had not read its answers for 1 s") >= 3, "the three to be closed"
        )
        assert health_ok(srv.port)
        assert not log.tracebacks(), log.tracebacks()
        for s in hogs:
            s.close()


def _low_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def _open_all(port: int, count: int) -> list[socket.socket]:
    """``count`` connections, all started at once, returned when every one is established (the kernel
    completes them, accepted by the server or not)."""
    socks = []
    with selectors.DefaultSelector() as sel:
        for _ in range(count):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
            sel.register(s, selectors.EVENT_WRITE)
        deadline = time.monotonic() + BOUND
        while sel.get_map():
            assert time.monotonic() < deadline, f"{len(sel.get_map())} connections not established"
            for key, _ in sel.select(timeout=0.2):
                sel.unregister(key.fileobj)
    return socks


def test_a_server_process_with_1024_files_survives_2000_idle_connections(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([fenced(GOOD)]))
    env = {**os.environ, "MEMDOOR_HOME": str(tmp_path)}
    env.pop("MEMDOOR_SERVE_TOKEN", None)
    server = ServerProcess(["--model", f"scripted:{answers}", "--team", "single"], env, preexec_fn=_low_files)
    flood: list[socket.socket] = []
    try:
        flood = _open_all(server.port, 2000)
        assert health_ok(server.port)  # without a cap, the server could no longer accept it
        c = httpx.post(
            f"http://127.0.0.1:{server.port}/v1/chat/completions",
            json={"model": "memdoor/single", "messages": user(ADD_PROMPT)},
            timeout=WAIT,
        )
        assert c.status_code == 200
    finally:
        for s in flood:
            s.close()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(WAIT)
    server.reader.join(WAIT)
    log = "".join(server.startup + server.drained())
    assert "Too many open files" not in log
    assert "Traceback" not in log
    assert "serving at most 384 connections, not 1000" in log
    made_room = [line for line in log.splitlines() if "to make room" in line]
    assert 2 <= len(made_room) <= 4, made_room  # once in full, then counted (every 10 s and at the end)
    evicted = sum(
        int(m.group(1).replace(",", "")) for m in map(re.compile(r"… ([\d,]+) more").search, made_room) if m
    )
    assert evicted >= 100  # hundreds closed to make room (the kernel holds back part of the flood)


def test_a_burst_of_accept_errors_is_logged_once_with_a_count():
    """asyncio's own report of accept() out of files, 1,000 times: one traceback, then one count."""
    summary = RepeatSummary(window_s=60.0)
    loop = asyncio.new_event_loop()
    with Records() as log:
        summary.attach(["asyncio"])
        try:
            for _ in range(1000):
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(errno.EMFILE, os.strerror(errno.EMFILE)),
                    }
                )
        finally:
            summary.detach()  # logs what is still counted
            loop.close()
    lines = log.lines("socket.accept() out of system resource")
    assert len(lines) == 2, lines
    assert len(log.tracebacks()) == 1
    assert "999 more in the last" in lines[1]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--idle-timeout", "0"], "--idle-timeout: must be more than 0"),
        (["--header-timeout", "nan"], "--header-timeout: must be a finite number"),
        (["--body-timeout", "7200"], "--body-timeout: must be at most 3600"),
        (["--max-connections", "0"], "--max-connections: must be at least 1"),
        (["--write-timeout", "0"], "--write-timeout: must be more than 0"),
    ],
)
def test_bad_connection_limits_exit_2_with_a_message(argv, says, capsys):
    code = main(["serve", "--port", "0", "--model", "scripted:/dev/null", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"memdoor: {says}") and len(err.strip().splitlines()) == 1


def test_the_connection_flags_reach_the_config():
    p = argparse.ArgumentParser()
    configure(p)
    args = p.parse_args(
        [
            *("--max-connections", "7", "--idle-timeout", "1.5", "--header-timeout", "2"),
            *("--body-timeout", "3", "--write-timeout", "4"),
        ]
    )
    config = build_config(args)
    assert (
        config.max_connections,
        config.idle_timeout_s,
        config.header_timeout_s,
        config.body_timeout_s,
        config.write_timeout_s,
    ) == (
        7,
        1.5,
        2.0,
        3.0,
        4.0,
    )


def test_a_request_being_answered_outlives_the_connection_timeouts(sandbox, gated):
    """The timeouts bound reading a request; a team that works longer than all of them still answers."""
    settings = {"idle_timeout_s": 1.0, "header_timeout_s": 1.0, "body_timeout_s": 1.0}
    with running({"gated": gated}, sandbox, teams=["memdoor/single"], **settings) as srv:
        body = chat_body(stream=True)
        streamed = connect(srv.port)
        streamed.sendall(request_head(body) + body)
        assert gated.entered.wait(WAIT)
        time.sleep(3.0)  # three times every timeout, while the team works
        gated.gate.set()
        answer = until_closed([streamed])[streamed]
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert b'"finish_reason":"stop"' in answer.replace(b" ", b"") and b"data: [DONE]" in answer
