from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chats", "0006_chat_parity_message_tree"),
        ("chats", "0007_projects_pendingaction_kinds"),
    ]

    operations = []
