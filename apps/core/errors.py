"""Domain errors that services raise and views/commands turn into messages."""

from __future__ import annotations


class JarvisError(Exception):
    """Base for errors whose message is safe and useful to show a person."""


class Refused(JarvisError):
    """The request is understood but not allowed or not possible as asked."""


class TooMany(Refused):
    """The person asked too often or has too much running; trying later works (HTTP 429)."""


class Conflict(JarvisError):
    """The thing changed underneath the caller; nothing was written."""


class AlreadyExists(JarvisError):
    """A thing with that name or identity is already there."""
