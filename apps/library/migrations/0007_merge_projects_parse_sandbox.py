from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0006_merge_parse_sandbox"),
        ("library", "0006_merge_projects"),
    ]

    operations = []
