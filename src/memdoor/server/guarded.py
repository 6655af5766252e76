"""The uvicorn server of ``memdoor serve``: its connection cap fitted to the open-file limit, repeats summarized.

A server that accepts connections until ``accept()`` fails with "Too many open files" can no longer
answer anyone, ``/health`` included, and asyncio logs a traceback for each failure. So at start the
process's soft open-file limit is raised to its hard limit, and the cap on connections
(:class:`~memdoor.server.connections.ConnectionGuard`) is lowered, if need be, so that the open
connections, the sockets accepted before they are counted (the listen backlog, lowered to the cap)
and the server's own files all fit under it.
"""

from __future__ import annotations

import logging
import resource
from typing import Any

import uvicorn

from memdoor.server.connections import LOG, ConnectionGuard
from memdoor.server.logsummary import RepeatSummary

RESERVED_FILES = 256
"""Open files kept for the server itself (sandbox pipes, model files, logs), never for connections."""
SUMMARIZED_LOGS = (LOG, "asyncio")
"""Loggers whose repeated lines are summarized: uvicorn's (connections, ASGI errors) and asyncio's (accept)."""


def open_files_limit() -> int:
    """The process's open-file limit, its soft limit first raised to the hard one when it can be."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def fit_connections(wanted: int, files: int) -> int:
    """The connection cap under ``files`` open files: half of what the server does not keep for
    itself, the other half for sockets accepted but not yet counted (see :func:`backlog_for`)."""
    return max(1, min(wanted, (files - RESERVED_FILES) // 2))


def backlog_for(cap: int, files: int, backlog: int) -> int:
    """The listen backlog beside a cap of ``cap`` connections under ``files`` open files: asyncio accepts
    up to a backlog of sockets at a time, and about three batches, plus the sockets being closed, may be
    open before the first batch is counted, so four backlogs must fit in what the cap leaves."""
    return max(8, min(backlog, (files - RESERVED_FILES - cap) // 4))


class GuardedServer(uvicorn.Server):
    """uvicorn's server, with its connection cap fitted to the open-file limit and repeated log lines
    summarized (flushed about once a second)."""

    def __init__(self, config: Any, guard: ConnectionGuard, summary: RepeatSummary):
        super().__init__(config)
        self.guard = guard
        self.summary = summary

    async def serve(self, sockets: Any = None) -> None:
        wanted = self.guard.max_connections
        files = open_files_limit()
        self.guard.max_connections = fit_connections(wanted, files)
        self.config.backlog = backlog_for(self.guard.max_connections, files, self.config.backlog)
        if self.guard.max_connections < wanted:
            logging.getLogger(LOG).warning(
                "serving at most %d connections, not %d: the process may open %d files (ulimit -n)",
                self.guard.max_connections,
                wanted,
                files,
            )
        self.summary.attach(SUMMARIZED_LOGS)
        try:
            await super().serve(sockets)
        finally:
            self.summary.detach()

    async def shutdown(self, sockets: Any = None) -> None:
        await super().shutdown(sockets)
        self.summary.flush(final=True)  # before uvicorn re-raises a SIGTERM, which ends the process

    async def on_tick(self, counter: int) -> bool:
        if counter % 10 == 0:
            self.summary.flush()
        return await super().on_tick(counter)
