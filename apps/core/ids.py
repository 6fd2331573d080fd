"""Ids as the database stores them.

SQLite integers are signed 64-bit and Python's are unbounded, so an id taken
from a URL, a query string, a form or a websocket message is checked here
before it reaches a query: `int("9" * 23)` would raise OverflowError inside the
database driver (a 500), and `str.isdigit()` accepts "²", which `int()` refuses.
"""

from __future__ import annotations

import re

MAX_ID = 2**63 - 1
# ASCII digits only: int() also accepts full-width and other Unicode digits.
ID_PATTERN = "[0-9]{1,19}"
_ID = re.compile(ID_PATTERN)


def parse_id(value: object) -> int | None:
    """The id `value` names (1 … 2**63-1), or None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _ID.fullmatch(value):
        number = int(value)
    else:
        return None
    return number if 1 <= number <= MAX_ID else None


def parse_ids(values, *, limit: int = 100) -> list[int]:
    """The valid ids among `values` (at most `limit` looked at), in order, once each."""
    ids: list[int] = []
    for value in list(values)[:limit]:
        number = parse_id(value)
        if number is not None and number not in ids:
            ids.append(number)
    return ids


class IdConverter:
    """`<id:pk>` in a URL: like `<id:pk>`, but only ids the database can hold,
    so a longer number is a 404 from the resolver instead of reaching a view."""

    regex = ID_PATTERN

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            raise ValueError(f"not an id: {value!r}")  # the resolver treats this as no match
        return number

    def to_url(self, value: int | str) -> str:
        return str(value)
