"""Binding the server: the loopback rule, uvicorn in the foreground, or in a background thread.

Without a token, the server only binds loopback addresses: anyone who can reach an open port could
otherwise make this machine run teams (and their code, in the sandbox) at will.

The server is uvicorn's, with the connection limits of :mod:`memdoor.server.connections` (timeouts,
a cap on open connections that fits the process's open-file limit) and repeated log lines summarized
(:mod:`memdoor.server.logsummary`).
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

from memdoor.core.errors import UsageError
from memdoor.core.net import is_loopback_host
from memdoor.core.protocols import Sandbox
from memdoor.models.pool import ModelPool
from memdoor.server.config import TOKEN_ENV, ServeConfig


def check_bind(config: ServeConfig) -> None:
    """UsageError when ``config`` would serve a non-loopback address without a token."""
    if config.token is None and not is_loopback_host(config.host, resolve=True):
        raise UsageError(
            f"refusing to serve on {config.host} without a token: anyone who reaches it could run teams "
            f"here. Set --token (or ${TOKEN_ENV}), or bind 127.0.0.1"
        )


def build_server(
    config: ServeConfig,
    *,
    pool: ModelPool | None = None,
    sandbox: Sandbox | None = None,
    log_level: str = "info",
    access_log: bool = True,
) -> Any:
    """A uvicorn server for ``config`` (checked by :func:`check_bind`), not started."""
    import uvicorn

    from memdoor.server.app import create_app
    from memdoor.server.connections import ConnectionGuard, GuardedProtocol
    from memdoor.server.guarded import GuardedServer
    from memdoor.server.logsummary import RepeatSummary

    check_bind(config)
    app = create_app(config, pool=pool, sandbox=sandbox)
    guard = ConnectionGuard(
        max_connections=config.max_connections,
        idle_timeout_s=config.idle_timeout_s,
        header_timeout_s=config.header_timeout_s,
        body_timeout_s=config.body_timeout_s,
        write_timeout_s=config.write_timeout_s,
    )
    uv_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        http=functools.partial(GuardedProtocol, guard=guard),  # type: ignore[arg-type]
        log_level=log_level,
        access_log=access_log,
        timeout_graceful_shutdown=5,
        timeout_keep_alive=config.idle_timeout_s,  # type: ignore[arg-type]
        lifespan="on",
    )
    return GuardedServer(uv_config, guard, RepeatSummary(config.log_repeat_window_s))


def bound_port(server: Any) -> int:
    """The port a started uvicorn server listens on (useful with port 0)."""
    return int(server.servers[0].sockets[0].getsockname()[1])


class BackgroundServer:
    """A server running in a thread of this process (tests, benchmarks). ``with`` starts and stops it."""

    def __init__(self, config: ServeConfig, *, pool: ModelPool | None = None, sandbox: Sandbox | None = None):
        self.server = build_server(config, pool=pool, sandbox=sandbox, log_level="warning", access_log=False)
        self._thread = threading.Thread(target=self.server.run, name="memdoor-serve", daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, the base URL OpenAI clients take."""
        return f"http://{self.server.config.host}:{self.port}/v1"

    def start(self, timeout: float = 60.0) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the server stopped while starting (see the log above)")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start within {timeout:g} s")
            time.sleep(0.02)
        self.port = bound_port(self.server)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
