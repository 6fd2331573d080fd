"""Registering folder sources: who may, and where."""

import pytest

from apps.accounts import permissions
from apps.core.errors import AlreadyExists, Refused
from apps.library.services.sources import source_register


def test_a_member_without_the_permission_cannot_register_a_folder(member, vault):
    with pytest.raises(Refused, match="manage folder sources"):
        source_register(actor=member, owner=member, name="mine", path=str(vault.root))


def test_the_permission_through_a_group_allows_it(member, vault):
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.create(name="curators")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.MANAGE_FOLDER_SOURCES))
    )
    member.groups.add(group)
    member = type(member).objects.get(pk=member.pk)  # fresh permission cache
    source = source_register(actor=member, owner=member, name="mine", path=str(vault.root))
    assert source.cloud == "local-only"  # new folders fail closed
    assert source.private_dirs == ["private"]


def test_admins_register_folders_for_others(admin, owner, vault):
    source = source_register(actor=admin, owner=owner, name="hers", path=str(vault.root))
    assert source.owner == owner


def test_a_name_is_unique_per_owner(admin, owner, vault):
    source_register(actor=admin, owner=owner, name="Notes", path=str(vault.root))
    with pytest.raises(AlreadyExists):
        source_register(actor=admin, owner=owner, name="notes", path=str(vault.root))


@pytest.mark.parametrize("bad", ["../escape", "/absolute"])
def test_private_and_unversioned_dirs_must_stay_inside_the_source(admin, owner, vault, bad):
    with pytest.raises(Refused, match="inside the source"):
        source_register(
            actor=admin, owner=owner, name="x", path=str(vault.root), private_dirs=[bad]
        )
