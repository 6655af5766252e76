"""One loopback rule for model endpoints (URLs, no DNS) and the server's bind address (names resolved)."""

from __future__ import annotations

import base64

import pytest

from memdoor.core.net import is_loopback_host, is_loopback_url, redact_spec, redact_url, scrub


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.1.2.3/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        ("http://gpu-box:8000/v1", False),
        ("not a url", False),
    ],
)
def test_a_url_is_loopback_when_its_host_says_so(url, loopback):
    assert is_loopback_url(url) is loopback


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("127.8.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("no-such-host.invalid", False),
        ("", False),
    ],
)
def test_a_bind_host_is_loopback_when_every_address_is(host, loopback):
    assert is_loopback_host(host, resolve=True) is loopback


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:hunter2-pw@10.0.0.5:6379/0", "redis://:***@10.0.0.5:6379/0"),
        (
            "rediss://team:hunter2-pw@h:6380/0?ssl_ca_certs=/ca.pem",
            "rediss://team:***@h:6380/0?ssl_ca_certs=/ca.pem",
        ),
        ("redis://hunter2-pw@h/0", "redis://***@h/0"),  # a lone userinfo may be a password too
        ("redis://:p@ss/w:rd@h:6379/0", "redis://:***@h:6379/0"),  # unescaped "@" and "/" in it
        ("redis://h:6379/0?password=hunter2-pw&db=1", "redis://h:6379/0?password=***&db=1"),
        ("unix:///run/redis.sock?db=0&password=hunter2-pw", "unix:///run/redis.sock?db=0&password=***"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("https://h/v1?api_key=sk-123&x=1&access_token=t0k", "https://h/v1?api_key=***&x=1&access_token=***"),
        (
            "https://h/v1?key=sk-123&max_tokens=4&X-Api-Key=k",
            "https://h/v1?key=***&max_tokens=4&X-Api-Key=***",
        ),
    ],
)
def test_redact_url_hides_every_password(url, shown):
    assert redact_url(url) == shown


def test_scrub_removes_the_url_and_pieces_of_its_password_from_any_text():
    url = "redis://:abcd9/efgh7@127.0.0.1:6379/0"  # a parser cuts this password at "/"
    message = f"Port could not be cast to integer value as 'abcd9' (url {url})"
    scrubbed = scrub(message, url)
    assert "abcd9" not in scrubbed and "efgh7" not in scrubbed
    assert "redis://:***@127.0.0.1:6379/0" in scrubbed
    assert scrub("Error 111 connecting to 127.0.0.1:6379.", url) == "Error 111 connecting to 127.0.0.1:6379."


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        ("openai:m@http://alice:s3cretpw@127.0.0.1:8000/v1", "openai:m@http://alice:***@127.0.0.1:8000/v1"),
        ("openai:m@https://s3cretpw@h/v1", "openai:m@https://***@h/v1"),
        ("openai:m@http://u:p@ss/w@h/v1?api_key=sk-1&n=2", "openai:m@http://u:***@h/v1?api_key=***&n=2"),
        ("openai:org@team/m@http://h:8000/v1", "openai:org@team/m@http://h:8000/v1"),  # "@" in the name
        ("openai:m?token=sk-1", "openai:m?token=***"),  # a URL from the environment, a key in the spec
        # no secret: unchanged (the same name in Redis as before)
        ("openai:Qwen/Qwen2.5@http://gpu-1:8000/v1?request_timeout_s=1800",) * 2,
        ("local:qwen2.5-coder-0.5b?ctx=8192",) * 2,
        ("scripted:/tmp/answers.json",) * 2,
        ("scripted:/tmp/x@y/answers.json",) * 2,  # only openai specs hold a URL: a path's "@" is no user info
        ("local:m@x",) * 2,
        ("openai:s3://bucket/llama-8b@http://127.0.0.1:8000/v1",) * 2,  # "://" in the name
        ("openai:llama3:8b@http://h:8000/v1",) * 2,
        # the user info runs to the URL's last "@", whatever comes before it
        ("openai:m@http://alice:SEK#RET16@h/v1", "openai:m@http://alice:***@h/v1"),
        ("openai:m@http://alice:SEK?RET17@h/v1", "openai:m@http://alice:***@h/v1"),
        ("openai:m@http://alice@h/v1", "openai:m@http://***@h/v1"),
        # a URL without scheme://: the spec does not parse, and shows nothing after its model name
        ("openai:m@alice:SEKRET4@host/v1", "openai:m@<redacted>"),
        ("openai:m@http:/alice:SEKRET5@h/v1", "openai:m@<redacted>"),
        ("openai:m@http//alice:SEKRET6@h/v1", "openai:m@<redacted>"),
        ("openai:alice:SEKRET7@host/v1", "openai:<redacted>@<redacted>"),
        ("openai:m?x@http://alice:SEKRET8@h/v1", "openai:m?<redacted>"),
    ],
)
def test_redact_spec_hides_the_secrets_of_a_model_spec(spec, shown):
    assert redact_spec(spec) == shown


def test_scrub_removes_the_basic_credentials_an_endpoint_echoes():
    url = "http://alice:Pw%3Fhush-42@127.0.0.1:8000/v1"  # a "?" in the password, percent-encoded
    sent = base64.b64encode(b"alice:Pw?hush-42").decode()  # what an HTTP client sends as Basic auth
    message = f"Error code: 401 - got 'Authorization: Basic {sent}' for password Pw?hush-42"
    scrubbed = scrub(message, url)
    assert sent not in scrubbed and "hush-42" not in scrubbed and scrubbed.startswith("Error code: 401")
    alone = base64.b64encode(b"alice:").decode()  # a user name alone
    assert alone not in scrub(f"Basic {alone}", "http://alice@h/v1")
