"""The keyword index in columns (issue 10), and each version's place in its family.

- library_chunk_fts is recreated with title, headings, path, record and text
  columns (apps.library.index.fts) and refilled from the stored chunks and
  documents: nothing is re-embedded. `manage.py reindex --fts` does the same
  rebuild on a running instance.
- Document.family_position: 0 for the oldest version of a family, counting
  up; search uses it to find the newest version a person may see.
"""

from django.db import migrations, models

from apps.library.index import fts

OLD_FTS = (
    "CREATE VIRTUAL TABLE library_chunk_fts USING fts5("
    "text, context, tokenize = 'porter unicode61 remove_diacritics 2')"
)
OLD_REFILL = (
    "INSERT INTO library_chunk_fts(rowid, text, context) "
    "SELECT c.id, c.text, trim(c.header || char(10) || c.section) FROM library_chunk c"
)


def refill(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        fts.rebuild(cursor)


class Migration(migrations.Migration):
    dependencies = [("library", "0003_browser_library")]

    operations = [
        migrations.AddField(
            model_name="document",
            name="family_position",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunSQL(
            ["DROP TABLE library_chunk_fts", fts.CREATE_SQL],
            ["DROP TABLE library_chunk_fts", OLD_FTS, OLD_REFILL],
        ),
        migrations.RunPython(refill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="document",
            index=models.Index(
                condition=models.Q(
                    ("category", ""), ("entity", ""), ("record_status", ""), _negated=True
                ),
                fields=["source", "in_private_dir"],
                name="library_doc_records",
            ),
        ),
    ]
