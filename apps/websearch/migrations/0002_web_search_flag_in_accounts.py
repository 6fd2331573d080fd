"""The "use web search" permission moves to the accounts flags (the group
admin page's checkboxes): every group and person granted the old
websearch.use_web_search keeps the right as accounts.use_web_search, and the
old permission row goes, so the experts' list holds no second copy."""

from django.db import migrations

CODENAME = "use_web_search"
NAME = "Can use web search in chats"


def move_grants(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    ContentType = apps.get_model("contenttypes", "ContentType")
    old = Permission.objects.filter(content_type__app_label="websearch", codename=CODENAME).first()
    if old is None:
        return  # a new install: the flag is created with the accounts ones
    user_type, _ = ContentType.objects.get_or_create(app_label="accounts", model="user")
    new, _ = Permission.objects.get_or_create(
        content_type=user_type, codename=CODENAME, defaults={"name": NAME}
    )
    for group in old.group_set.all():
        group.permissions.add(new)
    for user in old.user_set.all():
        user.user_permissions.add(new)
    old.delete()


def move_back(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    ContentType = apps.get_model("contenttypes", "ContentType")
    new = Permission.objects.filter(content_type__app_label="accounts", codename=CODENAME).first()
    if new is None:
        return
    provider_type, _ = ContentType.objects.get_or_create(
        app_label="websearch", model="searchprovider"
    )
    old, _ = Permission.objects.get_or_create(
        content_type=provider_type, codename=CODENAME, defaults={"name": NAME}
    )
    for group in new.group_set.all():
        group.permissions.add(old)
    for user in new.user_set.all():
        user.user_permissions.add(old)


class Migration(migrations.Migration):
    dependencies = [
        ("websearch", "0001_initial"),
        ("accounts", "0006_use_web_search"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="searchprovider",
            options={"ordering": ["name"]},
        ),
        migrations.RunPython(move_grants, move_back),
    ]
