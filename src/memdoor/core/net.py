"""Whether an address names this machine: one answer for model endpoints and for the server's bind address."""

from __future__ import annotations

import base64
import ipaddress
import logging
import re
import socket
from typing import Any
from urllib.parse import unquote, urlsplit


def is_loopback_host(host: str, *, resolve: bool = False) -> bool:
    """True when ``host`` names this machine only: a loopback address (127.0.0.0/8, ::1), ``localhost``
    or a name under ``.localhost``; with ``resolve``, also a name whose every address is loopback (DNS
    is asked). A name that cannot be resolved is not loopback."""
    host = host.strip().strip("[]").lower()
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if host == "localhost" or host.endswith(".localhost"):
        return True
    if not resolve or not host:
        return False
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addrs = {str(info[4][0]).split("%")[0] for info in infos}
    return bool(addrs) and all(ipaddress.ip_address(a).is_loopback for a in addrs)


def is_loopback_url(url: str) -> bool:
    """True when the URL's host names this machine (no DNS lookup: the name itself must say so)."""
    return is_loopback_host(urlsplit(url).hostname or "")


_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>.*)@", re.DOTALL)
"""A URL's scheme and userinfo, the userinfo taken up to the last ``@`` whatever comes before it (``/``,
``?``, ``#`` included): a password holding any of them is covered, whichever way a parser cuts it."""
_SECRET_PARAM = re.compile(
    r"(?i)([?&](?:[\w.-]*[_.-])?"
    r"(?:password|passwd|pass|pwd|secret|token|auth|key|apikey|sig|signature|credential|credentials)=)"
    r"([^&#]*)"
)
"""A query parameter whose value is a secret: a name such as ``password``, ``token``, ``key``, or one ending in
``_key``, ``-token``, ``.secret`` (``api_key``, ``access_token``, ``client_secret``)."""


def redact_url(url: str) -> str:
    """``url`` fit for a log line or an error message: the password in its userinfo and any secret
    query parameter (``password=``, ``api_key=``...) replaced by ``***``; ``redis://:pw@host:6379/0`` becomes
    ``redis://:***@host:6379/0``. Works on text that is not a valid URL too (nothing is parsed that
    could fail), and takes the userinfo up to the last ``@``, so a password holding ``/`` or ``@``
    is covered."""
    m = _USERINFO.match(url)
    if m is not None:
        user, colon, _ = m["userinfo"].partition(":")
        shown = f"{user}:***" if colon and "/" not in user else "***"
        url = f"{m['scheme']}{shown}@{url[m.end() :]}"
    return _SECRET_PARAM.sub(r"\1***", url)


def split_options(rest: str) -> tuple[str, str]:
    """``"NAME?key=value&..."`` → ``("NAME", "key=value&...")``; options are empty when there is no ``?``."""
    head, _, query = rest.partition("?")
    return head, query


def split_model_url(rest: str) -> tuple[str, str | None]:
    """``"MODEL@URL"`` → ``("MODEL", "URL")``; ``"MODEL"`` → ``("MODEL", None)``.

    Splits at the ``@`` that starts an ``http://`` or ``https://`` URL, else at the last ``@``, so a
    model name may contain ``@`` (or ``://``) when a URL follows and a URL may carry ``user@host``.
    """
    lowered = rest.lower()
    cut = min((i for i in (lowered.find("@http://"), lowered.find("@https://")) if i >= 0), default=-1)
    if cut < 0:
        cut = rest.rfind("@")
    if cut < 0:
        return rest, None
    return rest[:cut], rest[cut + 1 :]


REDACTED = "<redacted>"
_URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


_PATH_BACKENDS = frozenset({"local", "scripted"})
"""Backends whose spec names a model or a file, never a URL."""


def redact_spec(spec: str) -> str:
    """A model spec (``openai:MODEL@http://user:pw@host/v1?api_key=...``) fit for an answer, an error
    message, a log line or a Redis value. The spec is cut as the backends cut it (``BACKEND:``, then
    :func:`split_options` and :func:`split_model_url`): the model name is shown as it is (``://`` in it
    included), the URL after it by :func:`redact_url` (its options too, so a password holding ``?`` or
    ``#`` is covered), and secret options (``?token=...``) as ``***``. A spec whose URL has no
    ``scheme://`` does not parse, and is shown as ``BACKEND:NAME@<redacted>`` (``NAME`` up to its first
    ``@``; ``<redacted>`` too when it holds a ``:``, as ``user:password`` would); options holding an
    ``@`` as ``?<redacted>``. A spec of a backend that holds no URL (:data:`_PATH_BACKENDS`:
    ``scripted:a@b.json``, a path) is shown as it is but for secret options; any other backend's (one
    that does not exist included) as an ``openai:`` spec. A spec with no secret is unchanged. Linear in the
    spec's length."""
    backend, sep, rest = spec.partition(":")
    if backend in _PATH_BACKENDS:  # a name or a path: its "@" is no user info
        return _SECRET_PARAM.sub(r"\1***", spec)
    head, query = split_options(rest)
    model, url = split_model_url(head)
    if url is None:
        if "@" in query:
            return f"{backend}{sep}{model}?{REDACTED}"
        return _SECRET_PARAM.sub(r"\1***", spec)
    url = rest[len(model) + 1 :]  # the URL with the options after it
    if _URL_START.match(url) is None:
        name = model.partition("@")[0]
        return f"{backend}{sep}{REDACTED if ':' in name else name}@{REDACTED}"
    return f"{backend}{sep}{model}@{redact_url(url)}"


def shown_specs(data: dict[str, Any]) -> dict[str, Any]:
    """A config's JSON dump as answers, traces and reports record it: its ``models`` and the keys of its
    ``params`` shown by :func:`redact_spec`; the rest unchanged."""
    return {
        **data,
        "models": [redact_spec(m) for m in data["models"]],
        "params": {redact_spec(k): v for k, v in data["params"].items()},
    }


def url_secrets(url: str) -> list[str]:
    """The secret pieces of ``url`` (its userinfo's password, percent-decoded too, secret query values,
    and their parts split at ``:``, ``/`` and ``@``, however a parser might cut them; the userinfo as HTTP
    Basic credentials in base64), longest first."""
    found: set[str] = set()
    m = _USERINFO.match(url)
    if m is not None:
        user, colon, password = m["userinfo"].partition(":")
        whole = password if colon and "/" not in user else m["userinfo"]
        found.update((whole, unquote(whole)))
        found.update(p for p in re.split(r"[:/@]", whole) if len(p) >= 3)
        # the Basic credentials an HTTP client sends for it, which a server may echo in an error
        for name, pw in ((user, password), (unquote(user), unquote(password))):
            found.add(base64.b64encode(f"{name}:{pw}".encode()).decode())
    found.update(v for _, v in _SECRET_PARAM.findall(url) if v)
    return sorted((s for s in found if s), key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """``text`` (an exception's message, a log line) with ``url`` shown redacted and no secret of
    ``url`` left in it (see :func:`redact_url`)."""
    text = text.replace(url, redact_url(url))
    for secret in url_secrets(url):
        text = text.replace(secret, "***")
    return text


HTTP_LOGGERS = ("httpx", "httpcore", "httpx2", "httpcore2")
"""The loggers of the HTTP client libraries (the ``openai`` client's is ``httpx2``)."""


def quiet_http_logs() -> None:
    """Keep the HTTP client libraries' loggers to warnings: at INFO httpx logs every request's URL, the
    password of its userinfo included."""
    for name in HTTP_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
