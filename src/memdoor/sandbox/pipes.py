"""The pipes of one sandbox process: the job written to its stdin, its stderr kept, its results cut into frames.

A frame is what the harness sends (``memdoor.sandbox.harness``, its head part): 8 bytes (header length,
payload length, big endian), a JSON header, the payload bytes. Nothing read here is trusted: the
candidate can write to the result pipe itself, so a malformed stream is reported, never raised.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import struct
import subprocess
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdoor.sandbox.session import Session

FRAME_HEAD = struct.Struct(">II")
"""A frame's first 8 bytes: the header's length and the payload's, big endian."""
MAX_HEADER = 64 * 1024
"""The longest header an honest harness sends (bytes)."""
STDERR_KEPT = 8192
"""How much of a sandbox's stderr is kept (bytes): enough for the last line when it does not start."""


class FrameReader:
    """Splits the harness's byte stream into (header, payload) frames, and says where it stops making sense.

    A chunk can hold the harness's good frames followed by bytes a candidate forged (a slow supervisor reads
    boot, job, load and the forgery at once): the good frames are returned with the error, so that each is
    judged in its phase (the forgery is then the candidate's, not a sandbox that did not start)."""

    def __init__(self, max_payload: int):
        self.buf = bytearray()
        self.max_payload = max_payload

    def feed(self, chunk: bytes) -> tuple[list[tuple[dict, bytes]], str | None]:
        """(the whole frames now readable, the reason the stream is malformed after them or None)."""
        self.buf += chunk
        frames = []
        while len(self.buf) >= FRAME_HEAD.size:
            hlen, plen = FRAME_HEAD.unpack_from(self.buf)
            if hlen > MAX_HEADER or plen > self.max_payload:
                return frames, "result stream too large or malformed"
            end = FRAME_HEAD.size + hlen + plen
            if len(self.buf) < end:
                break
            try:
                head = json.loads(bytes(self.buf[FRAME_HEAD.size : FRAME_HEAD.size + hlen]))
            except (ValueError, RecursionError):  # not JSON, or nested too deep: malformed
                return frames, "malformed result stream"
            if not isinstance(head, dict):
                return frames, "malformed result stream"
            frames.append((head, bytes(self.buf[FRAME_HEAD.size + hlen : end])))
            del self.buf[:end]
        return frames, None


class Pipes:
    """The sandbox's pipes: the job written to its stdin, its stderr kept (a little), results read.

    ``looked``: a time at which the results pipe was seen with nothing new in it (a lower bound: the last
    look was at or after it)."""

    def __init__(self, proc: subprocess.Popen, results_fd: int, job: bytes):
        self.proc, self.r = proc, results_fd
        self.looked = time.monotonic()
        self.stdin_fd, self.err_fd = proc.stdin.fileno(), proc.stderr.fileno()
        os.set_blocking(self.stdin_fd, False)
        self.pending = memoryview(job)
        self.poller = select.poll()  # not select(): fds above 1024 are common in a busy grader
        self.poller.register(results_fd, select.POLLIN)
        self.poller.register(self.err_fd, select.POLLIN)
        self.poller.register(self.stdin_fd, select.POLLOUT)

    def pump(self, wait_s: float, s: Session) -> bytes | None:
        """Move data for up to ``wait_s`` (0: only what is there); the bytes read from the results pipe (b""
        at its end), or None. The sandbox's stderr is kept in ``s.stderr``."""
        wait_ms = math.ceil(wait_s * 1000)  # rounded up: a poll that times out ends at or after the deadline
        before = time.monotonic()
        try:
            ready = dict(self.poller.poll(wait_ms))
        except InterruptedError:
            self.looked = before
            return None
        if self.stdin_fd in ready:
            try:
                self.pending = self.pending[os.write(self.stdin_fd, self.pending[: 1 << 16]) :]
            except BlockingIOError:
                pass
            except OSError:  # the sandbox closed its end: it is going away, the result pipe will say
                self.pending = memoryview(b"")
            if not self.pending:
                self.poller.unregister(self.stdin_fd)
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
                self.stdin_fd = -1
        if self.err_fd in ready:
            chunk = os.read(self.err_fd, 65536)
            if not chunk:
                self.poller.unregister(self.err_fd)
                self.err_fd = -1
            elif len(s.stderr) < STDERR_KEPT:
                s.stderr += chunk[: STDERR_KEPT - len(s.stderr)]
        if self.r not in ready:  # seen empty when poll returned: at its timeout, or when another fd woke it
            self.looked = before + (0.0 if ready else wait_ms / 1000)
            return None
        return os.read(self.r, 1 << 20)
