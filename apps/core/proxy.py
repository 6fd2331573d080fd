"""Who is on the other end: the client's address (and scheme) behind a reverse proxy.

Only a connection from a proxy listed in JARVIS_TRUSTED_PROXIES may say, in
X-Forwarded-For, whom it is forwarding for. The header is read from the right:
each proxy appends the address it was connected from, so the right-most entry
that is not itself a trusted proxy is the client, and anything to its left was
written by the client and may be invented. (daphne's --proxy-headers believed
the left-most entry from any peer, so a client that sent a new X-Forwarded-For
each time had a new address each time, and the sign-in throttle never held.)
"""

from __future__ import annotations

import ipaddress

from django.conf import settings


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def is_trusted_proxy(address: str | None) -> bool:
    ip = _ip(address or "")
    return ip is not None and any(ip in network for network in settings.TRUSTED_PROXIES)


def client_address(*, peer: str | None, forwarded_for: str | None) -> str | None:
    """The client's address given the connection's peer and its X-Forwarded-For."""
    if not is_trusted_proxy(peer) or not forwarded_for:
        return peer
    client = peer
    for hop in reversed(forwarded_for.split(",")):
        ip = _ip(hop)
        if ip is None:
            break  # garbage: whoever wrote it is not to be believed; the last good hop stands
        client = str(ip)
        if not is_trusted_proxy(client):
            break
    return client
