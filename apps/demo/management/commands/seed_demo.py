"""manage.py seed_demo: a demo household so a newcomer can sign in at once."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.demo.household import seed_demo_household, seed_demo_vaults
from apps.projects.services import registry_refresh


class Command(BaseCommand):
    help = "Create the demo household (an admin and two members) if it does not exist."

    def handle(self, *args, **options) -> None:
        created = seed_demo_household()
        if not created:
            self.stdout.write(
                "Demo household already exists. Forgot a password? "
                "`manage.py users set-password NAME`"
            )
        else:
            self.stdout.write("Demo household created. These passwords are shown only once:")
            for person in created:
                role = "admin " if person.admin else "member"
                self.stdout.write(f"  {role}  {person.username:<8} {person.password}")
        root = Path(settings.VAULTS_ROOT)
        root.mkdir(parents=True, exist_ok=True)
        seeded = seed_demo_vaults(root)
        for username, report in seeded:
            self.stdout.write(
                f"Demo vault for {username}: {report.added} files, "
                f"{report.chunks_embedded} passages indexed ({root / username})"
            )
        if seeded:
            # The worker would pick the demo's project notes up within ten
            # minutes; read them now so the Projects page is not empty at first.
            self.stdout.write(f"Project registry: {registry_refresh().summary()}")
