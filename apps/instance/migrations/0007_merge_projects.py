from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("instance", "0004_projects_model_note"),
        ("instance", "0006_merge_retrieval"),
    ]

    operations = []
