"""Typed readers for JARVIS_* environment variables.

Every reader names the variable in its error, so a typo in a unit file or
`.env` stops startup with a message that says exactly what to fix instead of
surfacing later as a confusing runtime failure.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.exceptions import ImproperlyConfigured

from apps.core.addresses import origin_normalize

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _bad(name: str, expected: str, got: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}: expected {expected}, got {got!r}")


def env_str(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _bad(name, "true or false", value)


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise _bad(name, "a whole number", value) from None
    if minimum is not None and number < minimum:
        raise _bad(name, f"a whole number of at least {minimum}", value)
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    value = _raw(name)
    path = default if value is None else Path(value).expanduser()
    if "\x00" in str(path):
        raise _bad(name, "a filesystem path", str(path))
    return path.resolve()


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = _raw(name)
    if value is None:
        return default
    if value not in choices:
        raise _bad(name, "one of " + ", ".join(choices), value)
    return value


def env_url(name: str, default: str) -> str:
    value = _raw(name)
    if value is None:
        return default
    if not value.startswith(("http://", "https://")):
        raise _bad(name, "an http(s) URL", value)
    return value.rstrip("/")


def env_timezone(name: str, default: str) -> str:
    value = _raw(name) or default
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise _bad(name, "an IANA time zone such as Europe/Prague", value) from None
    return value


def env_networks(
    name: str, default: list[str]
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Comma-separated IP addresses or networks (CIDR), e.g. `127.0.0.1,::1,10.0.0.0/8`."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise _bad(
                name, "IP addresses or networks such as 127.0.0.1 or 10.0.0.0/8", item
            ) from None
    return networks


def env_origins(name: str, default: list[str]) -> list[str]:
    """Comma-separated origins (`https://jarvis.home.arpa:8443`), normalised."""
    origins = []
    for item in env_list(name, default):
        origin = origin_normalize(item)
        if origin is None:
            raise _bad(name, "origins such as https://jarvis.home.arpa or http://host:8000", item)
        origins.append(origin)
    return origins


def env_channel_layers(name: str) -> dict:
    """CHANNEL_LAYERS from `name`: unset or "memory", the in-memory layer (one
    web process); redis://host:port/db (rediss://, unix://), a Redis that the
    web processes and the worker share (channels_redis)."""
    value = _raw(name) or "memory"
    if value == "memory":
        # Channels' in-memory layer, sweeping for expired messages once a second.
        return {"default": {"BACKEND": "apps.core.layers.InMemoryChannelLayer"}}
    if not value.startswith(("redis://", "rediss://", "unix://")):
        raise _bad(name, "redis://host:port/db or memory", value)
    # redis-py 8 reads with a 5 s socket timeout by default, the same 5 s a
    # consumer's blocking receive waits: under load the server's "nothing yet"
    # loses that race and the consumer dies. Reads get room to spare.
    host = {"address": value, "socket_timeout": 15}
    # channels_redis's Pub/Sub layer: a group_send is one PUBLISH, pushed to
    # each process subscribed to the group, which hands it to its sockets. Its
    # list-based layer reads every message with a blocking pop and a clean-up
    # script, one at a time per process: a hundred replies followed from
    # another process (about 1,500 frames a second) fell 2-3 s behind there,
    # and past its capacity of 100 waiting messages per process it dropped
    # frames silently (bench/stream_load.py --processes 2, docs/chat.md).
    config = {"hosts": [host]}
    backend = "channels_redis.pubsub.RedisPubSubChannelLayer"
    return {"default": {"BACKEND": backend, "CONFIG": config}}
