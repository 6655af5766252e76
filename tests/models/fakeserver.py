"""A small deterministic OpenAI-compatible chat-completions server for tests (stdlib only, loopback).

``POST /v1/chat/completions`` answers ``"answer to <last user message> #<k> seed=<seed>"`` for each
choice ``k``, with per-token log-probabilities ``-0.01 * (i + 1)`` and word-count usage. It can ignore
``n`` (like llama-cpp-python's server), omit logprobs, hold each request for ``delay`` seconds, and
records every request body and the peak number of requests in flight.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeServerConfig:
    ignore_n: bool = False
    """Answer one choice whatever ``n`` asks (llama-cpp-python's server does this)."""
    give_logprobs: bool = True
    """Include logprobs when the request asks for them."""
    delay: float = 0.0
    """Seconds to hold each request before answering (to observe concurrency)."""
    models: tuple[str, ...] = ("fake-model", "other-model")
    """Model names served; any other name gets a 404 like OpenAI's."""
    max_n: int | None = None
    """Reject ``n`` above this with a 400 (llama.cpp's server allows at most its slot count)."""
    usage_of_first_choice_only: bool = False
    """Report completion tokens of the first choice only (llama.cpp's server does this for n > 1)."""


def answer_text(prompt: str, k: int, seed: int | None) -> str:
    """The text the fake server generates for choice ``k`` of a prompt (tests compare against it)."""
    return f"answer to {prompt} #{k} seed={seed}"


def token_logprobs(text: str) -> list[float]:
    return [-0.01 * (i + 1) for i in range(len(text.split()))]


@dataclass
class _State:
    config: FakeServerConfig
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0


def _completion_body(req: dict[str, Any], cfg: FakeServerConfig) -> dict[str, Any]:
    messages = req.get("messages") or []
    prompt = messages[-1]["content"] if messages else ""
    n = 1 if cfg.ignore_n else int(req.get("n") or 1)
    seed = req.get("seed")
    max_tokens = req.get("max_tokens")
    choices = []
    for k in range(n):
        words = answer_text(prompt, k, seed).split()
        finish = "stop"
        if max_tokens is not None and len(words) > max_tokens:
            words, finish = words[:max_tokens], "length"
        text = " ".join(words)
        choice: dict[str, Any] = {
            "index": k,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            "logprobs": None,
        }
        if req.get("logprobs") and cfg.give_logprobs:
            choice["logprobs"] = {
                "content": [
                    {"token": w, "logprob": lp, "bytes": None, "top_logprobs": []}
                    for w, lp in zip(words, token_logprobs(text), strict=True)
                ]
            }
        choices.append(choice)
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
    counted = choices[:1] if cfg.usage_of_first_choice_only else choices
    completion_tokens = sum(len(c["message"]["content"].split()) for c in counted)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": req.get("model"),
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _make_handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                req = json.loads(raw)
            except ValueError:
                self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            with state.lock:
                state.requests.append(req)
                state.authorizations.append(self.headers.get("Authorization"))
                state.in_flight += 1
                state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
            # The request leaves the in-flight count before its answer is written: once the client
            # has the answer it may release its slot and send the next request before this thread
            # runs again, and counting after the write would see both at once.
            try:
                status, body = self._answer(req)
            finally:
                with state.lock:
                    state.in_flight -= 1
            self._send(status, body)

        def _answer(self, req: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            cfg = state.config
            if cfg.delay:
                time.sleep(cfg.delay)
            if cfg.max_n is not None and int(req.get("n") or 1) > cfg.max_n:
                error = {"message": f"n must be at most {cfg.max_n}", "type": "invalid_request_error"}
                return 400, {"error": error}
            if req.get("model") not in cfg.models:
                return 404, {
                    "error": {"message": f"model {req.get('model')!r} not found", "type": "not_found"}
                }
            return 200, _completion_body(req, cfg)

    return Handler


class FakeOpenAIServer:
    """Runs on 127.0.0.1 on a free port in a background thread. Use as a context manager."""

    def __init__(self, config: FakeServerConfig | None = None):
        self._state = _State(config or FakeServerConfig())
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self._state))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def config(self) -> FakeServerConfig:
        return self._state.config

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def authorizations(self) -> list[str | None]:
        with self._state.lock:
            return list(self._state.authorizations)

    @property
    def peak_in_flight(self) -> int:
        return self._state.peak_in_flight

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    """Serve until killed: ``python tests/models/fakeserver.py`` prints its base URL on the first line."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ignore-n", action="store_true", help="answer one choice whatever n asks")
    args = parser.parse_args()
    server = FakeOpenAIServer(FakeServerConfig(ignore_n=args.ignore_n))
    print(server.base_url, flush=True)
    try:
        server._httpd.serve_forever(0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
