"""Dataclasses to JSON and back, checked against their type hints.

What a sandbox child returns is decoded with this, never unpickled: a child
that parsed a hostile file can at worst send wrong values of the right types.
Handles the shapes the parsers use: nested dataclasses, list[X], dict[str, X],
X | None, unions of scalars, date, datetime, bytes (base64), str/int/float/bool.
"""

from __future__ import annotations

import base64
import dataclasses
import types
import typing
from datetime import date, datetime
from functools import cache
from typing import Any


class DecodeError(ValueError):
    pass


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    return value


def from_jsonable(kind: Any, data: Any) -> Any:
    origin = typing.get_origin(kind)
    if kind is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        return _union(typing.get_args(kind), data)
    if origin is list:
        (item,) = typing.get_args(kind) or (Any,)
        return [from_jsonable(item, value) for value in _expect(data, list)]
    if origin is dict:
        _key, item = typing.get_args(kind) or (str, Any)
        return {
            _expect(key, str): from_jsonable(item, value)
            for key, value in _expect(data, dict).items()
        }
    if dataclasses.is_dataclass(kind):
        return _dataclass(kind, _expect(data, dict))
    if kind is datetime:
        return _parse(datetime.fromisoformat, data)
    if kind is date:
        return _parse(date.fromisoformat, data)
    if kind is bytes:
        return _parse(base64.b64decode, data)
    if kind is float:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return float(data)
        raise DecodeError(f"expected a number, got {type(data).__name__}")
    if kind is int and isinstance(data, bool):
        raise DecodeError("expected a whole number, got a boolean")
    if kind in (str, int, bool, type(None)):
        return _expect(data, kind)
    raise DecodeError(f"cannot decode {kind!r}")


def _union(options: tuple, data: Any) -> Any:
    if data is None and type(None) in options:
        return None
    # Scalars first by exact type, so True stays a bool and 3 stays an int.
    for option in options:
        if option in (str, int, float, bool) and type(data) is option:
            return data
    for option in options:
        if option is type(None):
            continue
        try:
            return from_jsonable(option, data)
        except DecodeError:
            continue
    raise DecodeError(f"{type(data).__name__} fits none of {options!r}")


@cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _dataclass(kind: type, data: dict) -> Any:
    hints = _hints(kind)
    wanted = {f.name for f in dataclasses.fields(kind) if f.init}
    unknown = set(data) - wanted
    if unknown:
        raise DecodeError(f"unexpected fields {sorted(unknown)} for {kind.__name__}")
    try:
        return kind(**{name: from_jsonable(hints[name], value) for name, value in data.items()})
    except TypeError as exc:
        raise DecodeError(str(exc)) from None


def _expect(data: Any, kind: type) -> Any:
    if not isinstance(data, kind):
        raise DecodeError(f"expected {kind.__name__}, got {type(data).__name__}")
    return data


def _parse(parser, data: Any) -> Any:
    try:
        return parser(_expect(data, str))
    except ValueError as exc:
        raise DecodeError(str(exc)) from None
