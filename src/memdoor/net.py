"""Whether an address names this machine: one answer for model endpoints and for the server's bind address."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit


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
