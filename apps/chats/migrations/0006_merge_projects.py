from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chats", "0004_projects_instructions_remember"),
        ("chats", "0005_terminal_chat_kind"),
    ]

    operations = []
