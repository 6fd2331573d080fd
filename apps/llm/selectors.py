"""Which models a person may use: the catalogue filtered by their groups and
the cloud permission, their default, and a model named by its label."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Exists, OuterRef, QuerySet

from apps.accounts.permissions import USE_CLOUD_MODELS
from apps.core.errors import Refused
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings

if TYPE_CHECKING:
    from apps.accounts.models import User

CLOUD_REFUSED = "you may not use cloud models"


def may_use_cloud(*, user: User) -> bool:
    # Active superusers pass has_perm; an inactive account passes nothing.
    return user.has_perm(USE_CLOUD_MODELS)


def models_for(user: User) -> QuerySet[ModelEntry]:
    """The models `user` may pick: enabled, on an enabled connection, open to
    one of their groups (no groups = everyone; superusers see all groups'),
    and local unless they may use cloud models."""
    models = ModelEntry.objects.filter(enabled=True, connection__enabled=True).select_related(
        "connection"
    )
    if not getattr(user, "is_active", False) or not user.is_authenticated:
        return models.none()
    if not user.is_superuser:
        memberships = ModelEntry.groups.through.objects.filter(modelentry_id=OuterRef("pk"))
        models = models.filter(
            ~Exists(memberships) | Exists(memberships.filter(group__in=user.groups.all()))
        )
    if not may_use_cloud(user=user):
        # Only an explicit "local" counts: anything else is treated as cloud.
        models = models.filter(connection__location=Connection.Location.LOCAL)
    return models.order_by("connection__name", "model_id")


def _usable(user: User, model: ModelEntry) -> bool:
    return models_for(user=user).filter(pk=model.pk).exists()


def default_model_for(*, user: User, usable: list[ModelEntry] | None = None) -> ModelEntry | None:
    """Their own default while they may still use it, else the instance
    default if they may use that, else None. `usable`: models_for(user=user)
    when the caller has it already (the chat header shows both)."""
    # One query for both candidates (this runs for every reply): the
    # catalogue a person may use is a handful of rows.
    catalogue = models_for(user=user) if usable is None else usable
    usable = {model.pk: model for model in catalogue}
    for model_id in (user.default_model_id, instance_settings().default_model_id):
        if model_id in usable:
            return usable[model_id]
    return None


def model_for(*, user: User, label: str) -> ModelEntry:
    """The model labelled "<connection name>:<model id>", if `user` may use it;
    Refused with the reason otherwise.

    Admins (`is_staff`) may also name a model that is not in the catalogue, on
    an existing enabled connection, to try it out: they get an *unsaved*
    ModelEntry (pk None) with unknown capabilities (no tools, no vision, context
    0). The cloud rule still applies to them. Callers must not save it; to keep
    it, add it to the catalogue (`llm models add` or admin).
    """
    label = (label or "").strip()
    name, sep, model_id = label.partition(":")
    name, model_id = name.strip(), model_id.strip()
    if not sep or not name or not model_id:
        raise Refused(f"no model labelled {label!r} (expected <connection>:<model id>)")
    entry = (
        ModelEntry.objects.select_related("connection")
        .filter(connection__name=name, model_id=model_id)
        .first()
    )
    if entry is not None:
        if entry.is_cloud and not may_use_cloud(user=user):
            raise Refused(CLOUD_REFUSED)
        if not entry.enabled or not entry.connection.enabled:
            raise Refused(f"the model {label!r} is turned off")
        if not _usable(user, entry):
            raise Refused(f"the model {label!r} is not available to you")
        return entry
    connection = Connection.objects.filter(name=name, enabled=True).first()
    if connection is None or not (user.is_active and user.is_staff):
        raise Refused(f"no model labelled {label!r}")
    if connection.is_cloud and not may_use_cloud(user=user):
        raise Refused(CLOUD_REFUSED)
    return ModelEntry(connection=connection, model_id=model_id, display_name=model_id)
