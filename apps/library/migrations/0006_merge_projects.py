from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0004_projects_private_sections"),
        ("library", "0005_merge_retrieval"),
    ]

    operations = []
