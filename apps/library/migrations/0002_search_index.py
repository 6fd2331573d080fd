"""The keyword and vector indexes beside library_chunk.

- library_chunk_fts: FTS5 over chunk text (porter stemming, diacritics folded)
  plus a context column (title, section, record line).
- library_vec_1 / library_emb_1: generation 1 of the vector tables for the
  default model (all-MiniLM-L6-v2, 384 dimensions). `manage.py reindex` creates
  later generations when the model changes. The vec0 table holds 768-bit codes
  (apps.library.index.codes), the plain table the float vectors.
"""

from django.db import migrations

DEFAULT_MODEL = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
CODE_BITS = 768


def create_state(apps, schema_editor):
    IndexState = apps.get_model("library", "IndexState")
    IndexState.objects.get_or_create(
        pk=1,
        defaults={
            "model_name": DEFAULT_MODEL,
            "dimension": DIMENSION,
            "generation": 1,
            "code_bits": CODE_BITS,
        },
    )


class Migration(migrations.Migration):
    dependencies = [("library", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "CREATE VIRTUAL TABLE library_chunk_fts USING fts5("
            "text, context, tokenize = 'porter unicode61 remove_diacritics 2')",
            "DROP TABLE library_chunk_fts",
        ),
        migrations.RunSQL(
            f"CREATE VIRTUAL TABLE library_vec_1 USING vec0("
            f"chunk_id integer primary key, part integer partition key, bits bit[{CODE_BITS}], chunk_size=512)",
            "DROP TABLE library_vec_1",
        ),
        migrations.RunSQL(
            "CREATE TABLE library_emb_1 (chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL)",
            "DROP TABLE library_emb_1",
        ),
        migrations.RunPython(create_state, migrations.RunPython.noop),
    ]
