"""Permission flags come from groups (their union); superusers pass flags."""

from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions


def grant(group_name, *flags):
    group, _ = Group.objects.get_or_create(name=group_name)
    codenames = [permissions.codename(f) for f in flags]
    group.permissions.add(*Permission.objects.filter(codename__in=codenames))
    return group


def test_flags_are_the_union_of_a_users_groups(owner):
    owner.groups.add(grant("cloud", permissions.USE_CLOUD_MODELS))
    owner.groups.add(grant("digest", permissions.RUN_PAPER_DIGEST))
    assert owner.has_perm(permissions.USE_CLOUD_MODELS)
    assert owner.has_perm(permissions.RUN_PAPER_DIGEST)
    assert not owner.has_perm(permissions.MANAGE_FOLDER_SOURCES)
    assert not owner.has_perm(permissions.USE_AGENT_CHATS)


def test_a_member_without_groups_has_no_flags(member):
    assert not any(member.has_perm(flag) for flag in permissions.ALL_FLAGS)


def test_superusers_pass_every_flag(admin):
    assert all(admin.has_perm(flag) for flag in permissions.ALL_FLAGS)


def test_disabled_users_have_no_flags(owner):
    owner.groups.add(grant("cloud", permissions.USE_CLOUD_MODELS))
    owner.is_active = False
    owner.save()
    assert not owner.has_perm(permissions.USE_CLOUD_MODELS)


def test_household_membership_is_a_group(owner, outsider):
    assert owner.is_household_member
    assert not outsider.is_household_member
