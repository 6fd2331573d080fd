"""Which IP addresses are public: the rule the SSRF guard (`apps.core.fetch`)
applies to every address a URL resolves to; and what an origin is, as browsers
send it. Nothing here touches Django, so settings may import it."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


# Python's own is_global differs between patch releases and misses some ranges
# (2002::/16, 64:ff9b::/96, fec0::/10, 3fff::/20 are "global" on 3.11), so the
# IANA special-purpose ranges are listed here as well.
_BLOCKED_V4 = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",  # "this network", unspecified
        "10.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local, cloud metadata
        "172.16.0.0/12",
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and 255.255.255.255 broadcast
    )
)
_BLOCKED_V6 = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::/96",  # unspecified, loopback, deprecated IPv4-compatible
        "::ffff:0:0/96",  # IPv4-mapped (the embedded address is checked first)
        "::ffff:0:0:0/96",  # IPv4-translated
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard
        "2001::/23",  # IETF protocol assignments: Teredo, benchmarking, ORCHID
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
        "5f00::/16",  # SRv6 SIDs
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # deprecated site-local
        "ff00::/8",  # multicast
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a v6 address carries to reach (mapped, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour  # 2002::/16, else None


def is_public_address(ip: IPAddress | str) -> bool:
    """True when `ip` is an ordinary public unicast address; anything unparsable,
    special-purpose, or an IPv6 form embedding a non-public IPv4 address is not."""
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip)
        except ValueError:
            return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            # Mapped addresses reach the v4 host itself; NAT64 and 6to4 reach it
            # through a translator, so the v4 address is what must be public.
            return is_public_address(embedded)
        blocked = _BLOCKED_V6
    else:
        blocked = _BLOCKED_V4
    if any(ip in net for net in blocked):
        return False
    return ip.is_global and not (
        ip.is_multicast or ip.is_private or ip.is_reserved or ip.is_loopback or ip.is_link_local
    )


DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_normalize(text: str) -> str | None:
    """`scheme://host[:port]` as browsers send it in Origin, lower-cased and
    without a default port, or None for anything that is not such an origin."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets
    if port is None or port == DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"
