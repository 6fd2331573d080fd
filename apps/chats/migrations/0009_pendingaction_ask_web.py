from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chats", "0008_merge_projects_chat_parity"),
    ]

    operations = [
        migrations.AlterField(
            model_name="pendingaction",
            name="kind",
            field=models.CharField(
                choices=[
                    ("remove_document", "Remove a document"),
                    ("review_draft_edit", "Review a suggested change"),
                    ("draft_created", "A new draft"),
                    ("approve_tools", "Approve tool calls"),
                    ("remember", "Remember something"),
                    ("ask_user", "Questions for you"),
                    ("web_search", "Search the web"),
                ],
                max_length=30,
            ),
        ),
    ]
