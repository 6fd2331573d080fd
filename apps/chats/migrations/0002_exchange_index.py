"""Past exchanges, searchable: an FTS5 table over each question and its answer.

One row per answered assistant message (rowid = its id). The owner, chat and
the chat's privacy are stored beside the text so a search never leaves its
owner's chats and a cloud turn never reads a private chat's history.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("chats", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "CREATE VIRTUAL TABLE chats_exchange_fts USING fts5("
            "question, answer, owner_id UNINDEXED, chat_id UNINDEXED, private UNINDEXED, "
            "tokenize = 'porter unicode61 remove_diacritics 2')",
            "DROP TABLE chats_exchange_fts",
        ),
    ]
