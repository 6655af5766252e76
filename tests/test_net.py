"""One loopback rule for model endpoints (URLs, no DNS) and the server's bind address (names resolved)."""

from __future__ import annotations

import pytest

from memdoor.net import is_loopback_host, is_loopback_url


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
