"""benchmarks/optillm_meter.py: the relay counts what the model server did for each request through the proxy.

The pure parts on their own, then the relay on real loopback sockets between two stand-ins: a "model
server" that answers chat completions and keeps llama.cpp's token counters, and a "proxy" that, like
optillm's best-of-n, makes several calls through the relay's back face and reports only part of them."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from optillm_meter import (
    PREDICTED,
    PROMPT_PROCESSED,
    BackendCall,
    Counted,
    Meter,
    Relay,
    Upstream,
    backend_call,
    metered,
    metric_totals,
)

METRICS = """# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 120
llamacpp:tokens_predicted_total 345
llamacpp:requests_processing{slot="0"} 1
llamacpp:n_busy_slots_per_decode 0.5
"""


def test_the_counters_are_read_from_prometheus_text():
    totals = metric_totals(METRICS)
    assert totals[PROMPT_PROCESSED] == 120 and totals[PREDICTED] == 345
    assert "llamacpp:requests_processing" not in totals  # labelled lines are not totals
    assert metric_totals("garbage\nname notanumber\n") == {}


def test_a_backend_reply_gives_its_usage_or_zeros():
    reply = {"choices": [{}, {}, {}], "usage": {"prompt_tokens": 30, "completion_tokens": 12}}
    assert backend_call(200, json.dumps(reply).encode()) == BackendCall(200, 30, 12)
    assert backend_call(400, b'{"error": {"message": "n too large"}}') == BackendCall(400)
    assert backend_call(502, b"not json") == BackendCall(502)


def test_the_server_counter_wins_over_the_reported_sum_and_the_proxy_figure_is_kept():
    counted = Counted(
        calls=[BackendCall(200, 50, 10), BackendCall(200, 80, 4)],
        before={PREDICTED: 100.0, PROMPT_PROCESSED: 10.0},
        after={PREDICTED: 140.0, PROMPT_PROCESSED: 60.0},
    )
    reply = {"choices": [{"message": {"content": "x"}}], "usage": {"completion_tokens": 14}}
    out = metered(reply, counted)
    # prompts once per call; completion tokens as the server's counter moved (n=3 reported as 10)
    assert out["usage"] == {"prompt_tokens": 130, "completion_tokens": 40, "total_tokens": 170}
    assert out["meter"]["proxy_usage"] == {"completion_tokens": 14}
    assert (
        out["meter"]["reported_completion_tokens"] == 14
        and out["meter"]["server_prompt_tokens_processed"] == 50
    )
    assert out["choices"] == reply["choices"] and reply["usage"] == {
        "completion_tokens": 14
    }  # input untouched
    unreadable = Counted(calls=counted.calls, before=None, after={PREDICTED: 1.0})
    assert metered(reply, unreadable)["usage"]["completion_tokens"] == 14


class _ModelServer(ThreadingHTTPServer):
    """Answers each chat completion with ``max_tokens`` tokens per choice, but reports one choice's."""

    def __init__(self):
        self.predicted = 0
        self.prompts = 0
        self.seen_auth: list[str | None] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def _send(self, status, body, ctype="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                outer.seen_auth.append(self.headers.get("Authorization"))
                text = f"{PREDICTED} {outer.predicted}\n{PROMPT_PROCESSED} {outer.prompts}\n"
                self._send(200, text.encode(), "text/plain")

            def do_POST(self):
                outer.seen_auth.append(self.headers.get("Authorization"))
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                n, k = req.get("n", 1), req["max_tokens"]
                outer.predicted += n * k
                outer.prompts += 20
                body = {"choices": [{"message": {"content": "c"}}] * n,
                        "usage": {"prompt_tokens": 20, "completion_tokens": k}}  # fmt: skip
                self._send(200, json.dumps(body).encode())

            def log_message(self, *a):
                return

        super().__init__(("127.0.0.1", 0), H)


class _Proxy(ThreadingHTTPServer):
    """Like optillm's best-of-n: n=3 samples and one rating, through ``back``; reports the samples' usage."""

    def __init__(self):
        self.back = ""

        outer = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def do_POST(self):
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if req["model"].startswith("fail"):
                    _post(outer.back + "/v1/chat/completions", {"max_tokens": 7})
                    body, status = b'{"error": "truncated"}', 500
                else:
                    first = _post(outer.back + "/v1/chat/completions", {"max_tokens": 10, "n": 3})
                    _post(outer.back + "/v1/chat/completions", {"max_tokens": 2})
                    usage = {"completion_tokens": first["usage"]["completion_tokens"]}
                    body, status = (
                        json.dumps({"choices": [{"message": {"content": "best"}}], "usage": usage}),
                        200,
                    )
                    body = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                return

        super().__init__(("127.0.0.1", 0), H)


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.fixture
def relay(tmp_path):
    model, proxy = _ModelServer(), _Proxy()
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (model, proxy)]
    for t in threads:
        t.start()
    meter = Meter(
        Upstream(f"http://127.0.0.1:{model.server_address[1]}", {"Authorization": "Bearer engine-key"}),
        Upstream(f"http://127.0.0.1:{proxy.server_address[1]}"),
        tmp_path / "meter.jsonl",
    )
    r = Relay(meter)
    front, back = r.start()
    proxy.back = f"http://127.0.0.1:{back}"
    yield f"http://127.0.0.1:{front}", model, meter
    r.stop()
    for s in (model, proxy):
        s.shutdown()
        s.server_close()


def test_through_the_relay_a_reply_carries_every_token_the_server_handled(relay):
    front, model, meter = relay
    reply = _post(front + "/v1/chat/completions", {"model": "bon-m", "max_tokens": 10, "messages": []})
    assert reply["choices"][0]["message"]["content"] == "best"
    # the server generated 3 x 10 + 2 tokens over two calls with 20-token prompts; the proxy said 10
    assert reply["usage"] == {"prompt_tokens": 40, "completion_tokens": 32, "total_tokens": 72}
    assert reply["meter"]["proxy_usage"] == {"completion_tokens": 10} and reply["meter"]["backend_calls"] == 2
    assert set(model.seen_auth) == {"Bearer engine-key"}  # the engine's key, from the relay only
    log = [json.loads(line) for line in meter.log.read_text().splitlines()]
    assert [(r["model"], r["status"], r["completion_tokens"]) for r in log] == [("bon-m", 200, 32)]


def test_a_failed_request_is_passed_on_as_it_is_and_its_tokens_logged(relay):
    front, _, meter = relay
    request = urllib.request.Request(
        front + "/v1/chat/completions",
        data=json.dumps({"model": "fail-m", "max_tokens": 7, "messages": []}).encode(),
        headers={"Content-Type": "application/json"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(urllib.error.HTTPError) as e:
        opener.open(request, timeout=10)
    assert e.value.code == 500 and json.loads(e.value.read()) == {"error": "truncated"}
    (record,) = [json.loads(line) for line in meter.log.read_text().splitlines()]
    assert (record["status"], record["prompt_tokens"], record["completion_tokens"]) == (500, 20, 7)


def test_a_relay_that_never_started_closes_at_once(tmp_path):
    meter = Meter(Upstream("http://127.0.0.1:9"), Upstream("http://127.0.0.1:9"), tmp_path / "m.jsonl")
    relay = Relay(meter)
    stopper = threading.Thread(target=relay.stop, daemon=True)
    stopper.start()
    stopper.join(timeout=5)
    assert not stopper.is_alive()  # shutdown() of a server not serving would wait for ever
