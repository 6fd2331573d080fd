"""URL templates of HTTP tools: `https://api.example.org/weather?city={city}`.

The scheme and host are written out by the admin; a placeholder may stand
only in the path or the query, never in the scheme, host, port or fragment.
`check_template` enforces that when the tool is saved, `fill` again at every
call: each argument is percent-encoded for where it lands (nothing is left
unescaped, so no `/`, `?`, `#`, `@` or `&` of an argument survives), `.` and
`..` are refused as a path segment, and the filled URL's origin must equal the
template's. The fetch itself then goes through the SSRF guard (apps.core.fetch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from apps.core.errors import Refused
from apps.core.fetch import FetchRefused, check_url

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_PLACEHOLDERS = 10
MAX_VALUE_CHARS = 500


class TemplateError(Refused):
    """A template or an argument that is not allowed; the message says why."""


@dataclass(frozen=True)
class Template:
    text: str
    origin: tuple[str, str, int | None]  # scheme, host, port as written
    # (name, where): "path" or "query", in order of appearance, each name once.
    placeholders: tuple[tuple[str, str], ...]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.placeholders]


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise TemplateError("the port is not a number") from None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def check_template(text: str) -> Template:
    """The parsed template, or TemplateError saying what is wrong with it."""
    text = (text or "").strip()
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)", text)
    if not match:
        raise TemplateError("write the whole address, starting with https:// or http://")
    if match.group(1).lower() not in ("http", "https"):
        raise TemplateError("only http and https addresses can be used")
    authority = match.group(2)
    if "{" in authority or "}" in authority:
        raise TemplateError(
            "the host must be written out: placeholders may stand only in the path or the query"
        )
    rest = text[match.end() :]
    if "#" in rest:
        raise TemplateError("a template has no #fragment")
    query_at = rest.find("?")
    placeholders: list[tuple[str, str]] = []
    for found in PLACEHOLDER.finditer(rest):
        name = found.group(1)
        if not NAME.match(name):
            raise TemplateError(
                f"{{{name}}} is not a placeholder name (lower-case letters, digits and _)"
            )
        if name in (n for n, _ in placeholders):
            raise TemplateError(f"{{{name}}} appears twice")
        where = "query" if 0 <= query_at < found.start() else "path"
        placeholders.append((name, where))
    if PLACEHOLDER.sub("", rest).count("{") or PLACEHOLDER.sub("", rest).count("}"):
        raise TemplateError("a { or } that is not part of a {placeholder}")
    if len(placeholders) > MAX_PLACEHOLDERS:
        raise TemplateError(f"at most {MAX_PLACEHOLDERS} placeholders")
    # The syntax rules of the SSRF guard (no credentials, a valid host, and a
    # literal address only when it is public or exempted) on a filled sample.
    try:
        check_url(PLACEHOLDER.sub("x", text))
    except FetchRefused as exc:
        raise TemplateError(str(exc).removeprefix("refused: ")) from None
    return Template(text=text, origin=_origin(text), placeholders=tuple(placeholders))


def arguments_schema(template: Template) -> dict:
    """The JSON Schema of the tool's arguments: one required string per placeholder."""
    return {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": f"Goes into the URL's {where}."}
            for name, where in template.placeholders
        },
        "required": template.names,
        "additionalProperties": False,
    }


def _value(name: str, where: str, raw: object) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise TemplateError(f"{name} must be a string")
    value = str(raw)
    if not value:
        raise TemplateError(f"{name} is empty")
    if len(value) > MAX_VALUE_CHARS:
        raise TemplateError(f"{name} is longer than {MAX_VALUE_CHARS} characters")
    if where == "path" and value in (".", ".."):
        # Percent-encoding leaves dots alone, and a server resolves a `..`
        # segment: it would climb out of the path the admin wrote.
        raise TemplateError(f"{name} cannot be {value!r}")
    # safe="": `/`, `?`, `#`, `@`, `&`, `=`, `:` and `%` are all encoded, so an
    # argument stays inside its one path segment or query value.
    return quote(value, safe="")


def fill(template: Template, arguments: dict) -> str:
    """The URL for these arguments; TemplateError when one is missing, unknown
    or would leave the template's origin."""
    unknown = sorted(set(arguments) - set(template.names))
    if unknown:
        raise TemplateError(f"unknown argument {', '.join(unknown)}")
    missing = [name for name in template.names if name not in arguments]
    if missing:
        raise TemplateError(f"missing argument {', '.join(missing)}")
    where = dict(template.placeholders)
    url = PLACEHOLDER.sub(
        lambda m: _value(m.group(1), where[m.group(1)], arguments[m.group(1)]), template.text
    )
    if _origin(url) != template.origin:
        raise TemplateError("the arguments would send the request to another host")
    return url
