"""A password or key in an ``openai:`` spec's URL reaches no answer, error message or log line: a real HTTP
server (the fake one), a refused port, and specs that do not parse."""

from __future__ import annotations

import logging
import socket

import pytest
from fakeserver import FakeOpenAIServer

from memdoor.core.errors import ModelError, ModelSpecError, ModelUnavailable
from memdoor.core.net import HTTP_LOGGERS, quiet_http_logs
from memdoor.models.openai_model import RequestRejected
from memdoor.models.pool import ModelPool

SECRET = "s3cretpw-hush"
FAST = "max_retries=1&backoff_base_s=0.01&backoff_max_s=0.02"
MESSAGES = [{"role": "user", "content": "write code"}]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens here once closed


async def complete(spec: str) -> object:
    """The answer of ``spec``'s model to one call, or the error it raised."""
    pool = ModelPool()
    try:
        return await pool.get(spec).complete(MESSAGES, max_tokens=16)
    except ModelError as e:
        return e
    finally:
        await pool.aclose()


@pytest.fixture
def quiet():
    """:func:`quiet_http_logs` for one test (the loggers' levels are put back after it)."""
    levels = {name: logging.getLogger(name).level for name in HTTP_LOGGERS}
    quiet_http_logs()
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


async def test_answers_errors_and_logs_show_the_spec_without_its_secrets(quiet, caplog):
    caplog.set_level(logging.INFO)  # as `memdoor worker` logs, after quiet_http_logs()
    with FakeOpenAIServer() as server:
        url = f"http://alice:{SECRET}@127.0.0.1:{server.port}/v1"
        answered = await complete(f"openai:fake-model@{url}?{FAST}")
        rejected = await complete(f"openai:no-such-model@{url}?{FAST}")  # the server's 404
    refused = await complete(f"openai:fake-model@http://alice:{SECRET}@127.0.0.1:{closed_port()}/v1?{FAST}")
    assert answered.model == f"openai:fake-model@http://alice:***@127.0.0.1:{server.port}/v1?{FAST}"
    assert isinstance(rejected, RequestRejected) and rejected.status == 404
    assert isinstance(refused, ModelUnavailable)
    for error in (rejected, refused):
        assert "alice:***@127.0.0.1" in str(error) and SECRET not in str(error)
    assert SECRET not in answered.model_dump_json()
    assert SECRET not in caplog.text and "HTTP Request" not in caplog.text  # no request lines of httpx


@pytest.mark.parametrize(
    "spec",
    [
        f"openai:m@http://alice:{SECRET}@127.0.0.1:99999/v1",  # a port out of range
        f"openai:m@ftp://alice:{SECRET}@127.0.0.1/v1",  # not http(s)
        f"openai:m@http://alice:{SECRET}@127.0.0.1/v1?%zz&&",  # settings that do not parse
        f"openai:m@http://alice:{SECRET}@127.0.0.1/v1?no_such_setting=1",  # an unknown setting
        f"nosuchbackend:m@http://alice:{SECRET}@127.0.0.1/v1",
        # a password holding "#" or "?" (not percent-encoded), or a URL without scheme://
        f"openai:m@http://alice:SEK#{SECRET}@127.0.0.1/v1",
        f"openai:m@http://alice:SEK?{SECRET}@127.0.0.1/v1",
        f"openai:m@http://alice:12?{SECRET}=1@127.0.0.1/v1",  # its tail would be named as a setting
        f"openai:m@http://alice:12#{SECRET}@127.0.0.1/v1",  # would parse: host alice, port 12
        f"openai:m@alice:{SECRET}@127.0.0.1/v1",
        f"openai:m@http:/alice:{SECRET}@127.0.0.1/v1",
        f"openai:m@http//alice:{SECRET}@127.0.0.1/v1",
    ],
)
def test_a_bad_spec_is_a_one_line_error_without_its_password(spec):
    with pytest.raises(ModelSpecError) as info:
        ModelPool().get(spec)
    assert SECRET not in str(info.value) and "\n" not in str(info.value)
