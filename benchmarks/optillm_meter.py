"""The metering relay of benchmarks/optillm_rows.py: counts what the model server really did for each optillm call.

optillm answers a chat completion after several calls of its own to the model server (best-of-n samples,
ratings, critiques, plans); its reply's ``usage`` gives only ``completion_tokens`` as the approach adds them
up (no prompt tokens; samples it drops, e.g. truncated ones, are left out; ``n`` > 1 requests count what
llama.cpp reports). Memdoor charges a call ``2 × parameters × (prompt + completion tokens)`` from the reply's
usage, so the relay sits on both sides of the proxy::

    memdoor ──► front face ──► optillm ──► back face ──► model server (llama.cpp, memdoor's engine)

- the **back face** forwards optillm's calls to the model server and keeps each reply's usage;
- the **front face** lets one memdoor request through at a time (so every call optillm makes in between is
  that request's), reads the server's token counters (``/metrics``) before and after, and replaces the
  reply's ``usage`` with the tokens counted: prompt tokens summed over optillm's calls (each call's prompt
  once, as memdoor counts its own calls), completion tokens as the server's counter moved (the sum of the
  calls' usage when the counter is unreadable). The proxy's own figure stays in the reply under
  ``meter.proxy_usage``.

Each memdoor request is one line of the JSON-lines log (``model``, ``status``, ``seconds``, both counts),
failed ones too: their tokens were generated but memdoor's ledger records a failed call at zero, so the log
is where the whole compute of a row is found (``optillm_rows.py tally``). Standard library only.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PREDICTED = "llamacpp:tokens_predicted_total"
PROMPT_PROCESSED = "llamacpp:prompt_tokens_total"


def metric_totals(text: str) -> dict[str, float]:
    """Prometheus text (llama.cpp's ``/metrics``) → ``{name: value}`` for the lines without labels."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "{" in line:
            continue
        name, _, value = line.partition(" ")
        try:
            out[name] = float(value.split()[0])
        except (ValueError, IndexError):
            continue
    return out


@dataclass(frozen=True)
class BackendCall:
    """One call optillm made to the model server, as its reply reported it."""

    status: int
    prompt_tokens: int = 0
    completion_tokens: int = 0


def backend_call(status: int, body: bytes) -> BackendCall:
    """A model server's reply → its usage (zeros when it is not a chat completion)."""
    try:
        data = json.loads(body)
    except ValueError:
        return BackendCall(status)
    if not isinstance(data, dict):
        return BackendCall(status)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return BackendCall(status, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


@dataclass
class Counted:
    """What the model server did for one memdoor request: optillm's calls and the counters around them."""

    calls: list[BackendCall] = field(default_factory=list)
    before: dict[str, float] | None = None
    after: dict[str, float] | None = None

    def counter(self, name: str) -> int | None:
        if self.before is None or self.after is None or name not in self.before or name not in self.after:
            return None
        return int(self.after[name] - self.before[name])

    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    def reported_completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    def completion_tokens(self) -> int:
        """The server's counter when readable, else the calls' reported sum."""
        generated = self.counter(PREDICTED)
        return self.reported_completion_tokens() if generated is None else generated

    def summary(self) -> dict[str, Any]:
        return {
            "backend_calls": len(self.calls),
            "backend_failed": sum(c.status != 200 for c in self.calls),
            "prompt_tokens": self.prompt_tokens(),
            "completion_tokens": self.completion_tokens(),
            "reported_completion_tokens": self.reported_completion_tokens(),
            "server_generated_tokens": self.counter(PREDICTED),
            "server_prompt_tokens_processed": self.counter(PROMPT_PROCESSED),
        }


def metered(reply: dict[str, Any], counted: Counted) -> dict[str, Any]:
    """optillm's reply with ``usage`` replaced by the tokens counted, its own usage under ``meter``."""
    prompt, completion = counted.prompt_tokens(), counted.completion_tokens()
    out = dict(reply)
    out["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    out["meter"] = {"proxy_usage": reply.get("usage"), **counted.summary()}
    return out


class Upstream:
    """Plain HTTP to one server on this machine (never through a proxy from the environment)."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None, timeout: float = 7200.0):
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.timeout = timeout
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def send(self, method: str, path: str, body: bytes | None = None) -> tuple[int, str, bytes]:
        """(status, content type, body); an error status is returned like any other."""
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base_url + path, data=body, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as resp:
                return resp.status, resp.headers.get("Content-Type", ""), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type", "") if e.headers else "", e.read()
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            message = {"error": {"message": f"relay: {self.base_url} unreachable: {reason}"}}
            return 502, "application/json", json.dumps(message).encode()

    def metrics(self) -> dict[str, float] | None:
        status, _, body = self.send("GET", "/metrics")
        return metric_totals(body.decode("utf-8", "replace")) if status == 200 else None


class Meter:
    """The relay's state: the two upstreams, the request being counted, the log."""

    def __init__(self, engine: Upstream, proxy: Upstream, log: Path):
        self.engine = engine
        self.proxy = proxy
        self.log = log
        self._serial = threading.Lock()  # one memdoor request through optillm at a time
        self._calls_lock = threading.Lock()
        self._current: list[BackendCall] | None = None

    def record(self, call: BackendCall) -> None:
        with self._calls_lock:
            if self._current is not None:
                self._current.append(call)

    def front(self, path: str, body: bytes) -> tuple[int, str, bytes]:
        """One memdoor request through optillm, counted."""
        with self._serial:
            counted = Counted(before=self.engine.metrics())
            with self._calls_lock:
                self._current = counted.calls
            started = time.time()
            try:
                status, ctype, reply = self.proxy.send("POST", path, body)
            finally:
                with self._calls_lock:
                    self._current = None
            counted.after = self.engine.metrics()
            seconds = time.time() - started
        data = _json_object(reply)
        proxy_usage = data.get("usage") if data else None
        if status == 200 and data is not None and isinstance(data.get("choices"), list):
            reply = json.dumps(metered(data, counted)).encode()
            ctype = "application/json"
        request = _json_object(body) or {}
        self._write(
            {
                "time": round(started, 3),
                "model": request.get("model"),
                "max_tokens": request.get("max_tokens") or request.get("max_completion_tokens"),
                "status": status,
                "seconds": round(seconds, 3),
                "proxy_usage": proxy_usage,
                **counted.summary(),
            }
        )
        return status, ctype, reply

    def back(self, method: str, path: str, body: bytes | None) -> tuple[int, str, bytes]:
        """One of optillm's calls to the model server, recorded when it is a chat completion."""
        status, ctype, reply = self.engine.send(method, path, body)
        if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            self.record(backend_call(status, reply))
        return status, ctype, reply

    def _write(self, record: dict[str, Any]) -> None:
        with self._calls_lock, self.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _handler(meter: Meter, side: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, status: int, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype or "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # the http.server API
            upstream = meter.proxy if side == "front" else meter.engine
            self._answer(*upstream.send("GET", self.path))

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if side == "back":
                self._answer(*meter.back("POST", self.path, body))
            elif self.path.rstrip("/").endswith("/chat/completions"):
                self._answer(*meter.front(self.path, body))
            else:
                self._answer(*meter.proxy.send("POST", self.path, body))

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the JSON log says it all
            return

    return Handler


class Relay:
    """Both faces, each a threaded HTTP server on loopback; ``start`` returns (front port, back port)."""

    def __init__(self, meter: Meter, front_port: int = 0, back_port: int = 0):
        self.meter = meter
        self._servers = [
            ThreadingHTTPServer(("127.0.0.1", front_port), _handler(meter, "front")),
            ThreadingHTTPServer(("127.0.0.1", back_port), _handler(meter, "back")),
        ]
        for server in self._servers:
            server.daemon_threads = True
        self._threads: list[threading.Thread] = []

    @property
    def ports(self) -> tuple[int, int]:
        front, back = (s.server_address[1] for s in self._servers)
        return int(front), int(back)

    def start(self) -> tuple[int, int]:
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self.ports

    def stop(self) -> None:
        for server, thread in zip(self._servers, self._threads, strict=False):
            if thread.is_alive():
                server.shutdown()  # waits for serve_forever: only for a server that runs
        for server in self._servers:
            server.server_close()
