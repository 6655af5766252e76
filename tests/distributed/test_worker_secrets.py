"""The Redis password never reaches a log line or an error message of `memdoor worker`, and
`rediss://` with a CA file works: real worker processes, real redis-servers (one with
``--requirepass``, one with TLS and certificates made here with openssl)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from dist_helpers import (
    ISSUE_PROMPT,
    PALINDROME_ANSWER,
    SRC,
    ChatEndpoint,
    RedisServer,
    WorkerProc,
    free_port,
    one_call,
    scripted_file,
    wait_for,
)

from memdoor.distributed.remote import RemoteConfig, RemoteRun
from memdoor.distributed.signing import served_name

PASSWORD = "Pw-7c1f9e-hush"
WRONG_PASSWORD = "Wrong-4d2a81-hush"


def run_worker(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    """`memdoor worker` to its end (it is expected to stop by itself); its stderr is captured."""
    spec = scripted_file(tmp_path / "answers.json", [PALINDROME_ANSWER])
    cmd = [
        sys.executable,
        "-m",
        "memdoor",
        "worker",
        "--redis",
        url,
        "--agent-id",
        "w",
        "--model",
        spec,
        *args,
    ]
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)


def assert_one_line_without(proc: subprocess.CompletedProcess, *secrets: str) -> str:
    """Exit 2, one line on stderr, no traceback, no secret; returns the line."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for secret in secrets:
        assert secret not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("memdoor: "), proc.stderr
    return line


@pytest.fixture
def locked(tmp_path):
    srv = RedisServer(tmp_path, extra=("--requirepass", PASSWORD)).start()
    yield srv
    srv.stop()


def test_a_worker_never_logs_its_redis_password_at_start_or_on_reconnect(tmp_path, locked):
    url = f"redis://:{PASSWORD}@127.0.0.1:{locked.port}/0"
    r = redis.Redis(host="127.0.0.1", port=locked.port, password=PASSWORD)
    spec = scripted_file(tmp_path / "answers.json", [PALINDROME_ANSWER])
    worker = WorkerProc(tmp_path, "w1", spec, url, "--role", "answer", "--heartbeat-ttl", "3")
    try:
        wait_for(lambda: r.hexists("memdoor:agents", "w1"), 120, "the worker registered", procs=[worker])
        wait_for(lambda: "serving" in worker.log, 60, "the start line", procs=[worker])
        assert f"redis://:***@127.0.0.1:{locked.port}/0" in worker.log
        locked.stop()  # connection errors, then a reconnect
        wait_for(lambda: "unreachable" in worker.log, 120, "the connection error", procs=[worker])
        locked.start()
        wait_for(lambda: "Redis is back" in worker.log, 120, "the reconnect", procs=[worker])
        worker.signal(15)
        assert worker.wait(120) == 0
    finally:
        worker.stop()
    assert PASSWORD not in worker.log


def test_unreachable_redis_is_one_line_without_the_password(tmp_path):
    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"
    line = assert_one_line_without(run_worker(tmp_path, url, "--startup-timeout", "2"), PASSWORD)
    assert "redis://:***@127.0.0.1" in line and "unreachable" in line


def test_a_wrong_password_is_refused_at_once_in_one_line_without_it(tmp_path, locked):
    url = f"redis://:{WRONG_PASSWORD}@127.0.0.1:{locked.port}/0"
    line = assert_one_line_without(run_worker(tmp_path, url, "--startup-timeout", "120"), WRONG_PASSWORD)
    assert "refused the credentials" in line and "AuthenticationError" in line


def test_a_url_that_does_not_parse_shows_no_part_of_the_password(tmp_path):
    # an unescaped "/" in the password: the URL parser cuts the password and complains about a piece of it
    secret = "Abcd9/efgh7-hush"
    url = f"redis://:{secret}@127.0.0.1:6379/0"
    line = assert_one_line_without(run_worker(tmp_path, url), secret, "Abcd9", "efgh7-hush")
    assert "bad Redis URL" in line


# -- TLS -------------------------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=120)


def make_ca(d: Path, name: str) -> Path:
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", cwd=d,
    )  # fmt: skip
    return d / f"{name}.pem"


def make_server_cert(d: Path, ca: str) -> tuple[Path, Path]:
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "srv.key",
        "-out",
        "srv.csr",
        cwd=d,
    )
    _openssl(
        "x509", "-req", "-in", "srv.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext.cnf", "-out", "srv.pem", cwd=d,
    )  # fmt: skip
    return d / "srv.pem", d / "srv.key"


@pytest.fixture
def tls(tmp_path):
    """A redis-server answering TLS on ``tls.tls_port`` (certificate signed by ``tls.ca``) and plain TCP on
    ``tls.port`` (only to see it is up); skipped when openssl or TLS support in redis-server is missing."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    certs = tmp_path / "certs"
    certs.mkdir()
    ca = make_ca(certs, "team-ca")
    cert, key = make_server_cert(certs, "team-ca")
    tls_port = free_port()
    data = tmp_path / "data"
    data.mkdir()
    srv = RedisServer(
        data,
        extra=(
            "--tls-port", str(tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
            "--tls-ca-cert-file", str(ca), "--tls-auth-clients", "no",
        ),
    )  # fmt: skip
    try:
        srv.start()
    except RuntimeError:
        pytest.skip("this redis-server does not start with --tls-port (built without TLS)")
    srv.tls_port, srv.ca, srv.certs = tls_port, ca, certs
    yield srv
    srv.stop()


def test_a_worker_serves_over_rediss_with_a_ca_file(tmp_path, tls):
    url = f"rediss://127.0.0.1:{tls.tls_port}/0"
    spec = scripted_file(tmp_path / "answers.json", [PALINDROME_ANSWER])
    r = redis.Redis(host="127.0.0.1", port=tls.port)  # the plain port, to watch
    worker = WorkerProc(tmp_path, "w1", spec, url, "--redis-ca", str(tls.ca))  # answers and leads
    try:
        wait_for(
            lambda: r.hexists("memdoor:agents", "w1"), 120, "the worker registered over TLS", procs=[worker]
        )
        # an orchestrator reaches it with the CA in the URL (how every other client takes it)
        remote = RemoteRun(RemoteConfig(url=f"{url}?ssl_ca_certs={tls.ca}", poll=0.2))
        assert one_call(remote, spec) == PALINDROME_ANSWER
        # and the worker leads a seed task over TLS (its job streams and its team memory)
        r.set("task:tls1", json.dumps({"id": "tls1", "prompt": ISSUE_PROMPT}))
        raw = wait_for(lambda: r.get("memory:tls1"), 180, "the answer at memory:tls1", procs=[worker])
        assert json.loads(raw)["status"] == "done", raw
        assert f"on rediss://127.0.0.1:{tls.tls_port}/0?ssl_ca_certs=" in worker.log
    finally:
        worker.stop()


def test_a_wrong_ca_is_refused_in_one_line(tmp_path, tls):
    other_ca = make_ca(tls.certs, "stranger-ca")
    url = f"rediss://:{PASSWORD}@127.0.0.1:{tls.tls_port}/0"
    line = assert_one_line_without(
        run_worker(tmp_path, url, "--redis-ca", str(other_ca), "--startup-timeout", "120"), PASSWORD
    )
    assert "TLS certificate was refused" in line and "rediss://:***@127.0.0.1" in line


def test_redis_ca_needs_a_tls_url_and_a_readable_file(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("not used")
    line = assert_one_line_without(
        run_worker(tmp_path, f"redis://:{PASSWORD}@127.0.0.1:1/0", "--redis-ca", str(ca)), PASSWORD
    )
    assert "needs a rediss:// (TLS) URL" in line
    line = assert_one_line_without(
        run_worker(tmp_path, "rediss://127.0.0.1:1/0", "--redis-ca", str(tmp_path / "nope.pem"))
    )
    assert "cannot read the CA file" in line


# -- a model endpoint's credentials ----------------------------------------------------------------


def everything_in(r: redis.Redis) -> str:
    """Every key of the Redis and every value it holds, as one text."""
    dump = {
        b"string": lambda k: [r.get(k)],
        b"list": lambda k: r.lrange(k, 0, -1),
        b"hash": lambda k: [x for kv in r.hgetall(k).items() for x in kv],
        b"stream": lambda k: [repr(e) for e in r.xrange(k)],
    }
    parts = []
    for key in r.scan_iter(count=1000):
        parts.append(repr(key))
        parts.extend(repr(v) for v in dump.get(r.type(key), lambda k: [])(key))
    return "\n".join(parts)


def test_a_model_endpoints_password_reaches_no_answer_redis_value_or_log_line(tmp_path, server, r):
    endpoint = ChatEndpoint()
    spec = f"openai:m@http://alice:{PASSWORD}@127.0.0.1:{endpoint.port}/v1"
    worker = WorkerProc(tmp_path, "w1", spec, server.url)  # answers and leads
    try:
        wait_for(lambda: "serving" in worker.log, 120, "the worker serving", procs=[worker])
        tests = [{"input": ["abba"], "output": True}, {"input": ["abc"], "output": False}]
        r.set("task:t1", json.dumps({"id": "t1", "prompt": ISSUE_PROMPT, "tests": tests, "agents": 1}))
        raw = wait_for(lambda: r.get("memory:t1"), 180, "the answer at memory:t1", procs=[worker])
        # an orchestrator holding the very spec reaches the worker (both name the model without the password)
        remote = RemoteRun(RemoteConfig(url=server.url, poll=0.2))
        assert one_call(remote, spec) == PALINDROME_ANSWER
    finally:
        worker.stop()
        endpoint.close()
    answer = json.loads(raw)
    shown = f"openai:m@http://alice:***@127.0.0.1:{endpoint.port}/v1"
    served = served_name(spec, None)  # the shown spec and a digest of the raw one
    assert served.startswith(f"{shown}#") and answer["status"] == "done", answer
    assert answer["agents"] == [f"agent0={served}"], answer
    assert PASSWORD not in raw.decode() and PASSWORD not in everything_in(r)
    assert f"serving {shown}" in worker.log and PASSWORD not in worker.log
    assert "HTTP Request" not in worker.log  # httpx's request lines (with the URL) stay off
