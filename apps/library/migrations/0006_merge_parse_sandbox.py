from django.db import migrations


class Migration(migrations.Migration):
    """Joins the parse sandbox's document queue fields (issue 11) to main's
    formats and retrieval migrations; no operations of its own."""

    dependencies = [
        ("library", "0004_parse_sandbox_document_queue"),
        ("library", "0005_merge_retrieval"),
    ]

    operations = []
