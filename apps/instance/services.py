"""Instance configuration: the write path for LLM connections and the model
catalogue (checking a connection talks to it, so that lives in `apps.llm.services`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.contrib.auth.models import Group
from django.db import transaction

from apps.core import crypto
from apps.core.errors import AlreadyExists
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings

logger = logging.getLogger(__name__)


def connection_create(
    *,
    name: str,
    kind: str,
    base_url: str,
    api_key: str = "",
    location: str = Connection.Location.CLOUD,
    enabled: bool = True,
) -> Connection:
    """Add an endpoint. AlreadyExists for a taken name (case-insensitive);
    django's ValidationError for a bad URL, kind or location."""
    name = name.strip()
    if Connection.objects.filter(name__iexact=name).exists():
        raise AlreadyExists(f"a connection named {name!r} already exists")
    connection = Connection(
        name=name, kind=kind, base_url=base_url, location=location, enabled=enabled
    )
    connection.set_api_key(api_key)
    connection.full_clean()
    connection.save()
    logger.info("added LLM connection %s (%s, %s)", connection.name, kind, connection.location)
    return connection


def connection_set_api_key(*, connection: Connection, api_key: str) -> None:
    """Replace the stored key; blank clears it."""
    connection.set_api_key(api_key)
    connection.save(update_fields=["api_key_encrypted", "updated"])
    logger.info("%s the API key of connection %s", "set" if api_key else "cleared", connection)


def connections_reencrypt() -> int:
    """Re-encrypt every stored key under the current Fernet key (after adding a
    new first key to JARVIS_FERNET_KEYS), so older keys can be dropped.
    Returns how many keys were rewritten."""
    done = 0
    for connection in Connection.objects.exclude(api_key_encrypted=""):
        token = crypto.rotate(connection.api_key_encrypted)
        Connection.objects.filter(pk=connection.pk).update(api_key_encrypted=token)
        done += 1
    return done


def model_add(
    *,
    connection: Connection,
    model_id: str,
    display_name: str = "",
    supports_tools: bool = False,
    supports_vision: bool = False,
    context_length: int = 0,
    enabled: bool = True,
    groups: Iterable[Group] = (),
    default: bool = False,
) -> ModelEntry:
    """Add a model to the catalogue; `default` also makes it the instance default."""
    model_id = model_id.strip()
    if ModelEntry.objects.filter(connection=connection, model_id=model_id).exists():
        raise AlreadyExists(f"{connection.name}:{model_id} is already in the catalogue")
    entry = ModelEntry(
        connection=connection,
        model_id=model_id,
        display_name=display_name,
        supports_tools=supports_tools,
        supports_vision=supports_vision,
        context_length=context_length,
        enabled=enabled,
    )
    entry.full_clean()
    with transaction.atomic():
        entry.save()
        if groups:
            entry.groups.set(groups)
        if default:
            default_model_set(model=entry)
    logger.info("added model %s", entry.label)
    return entry


def models_add_found(
    *,
    connection: Connection,
    model_ids: Iterable[str],
    capabilities: dict[str, tuple[int | None, bool | None, bool | None]] | None = None,
) -> list[ModelEntry]:
    """Add the ids a check found that are not in the catalogue yet, with the
    (context length, tools, vision) the endpoint stated for each in
    `capabilities`; what it did not state stays unknown (0 / no tools / no
    vision) for an admin to tick afterwards."""
    known = set(connection.models.values_list("model_id", flat=True))
    stated = capabilities or {}
    new = []
    for model_id in dict.fromkeys(m.strip() for m in model_ids):
        if not model_id or model_id in known or len(model_id) > 200:
            continue
        context, tools, vision = stated.get(model_id, (None, None, None))
        new.append(
            ModelEntry(
                connection=connection,
                model_id=model_id,
                context_length=context or 0,
                supports_tools=bool(tools),
                supports_vision=bool(vision),
            )
        )
    with transaction.atomic():
        for entry in new:
            entry.save()
    return new


def default_model_set(*, model: ModelEntry | None) -> None:
    """The instance default (None clears it)."""
    settings = instance_settings()
    settings.default_model = model
    settings.save(update_fields=["default_model"])
