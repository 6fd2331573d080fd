"""manage.py seed_demo: a demo household so a newcomer can sign in at once."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from apps.instance.demo import seed_demo_household


class Command(BaseCommand):
    help = "Create the demo household (an admin and two members) if it does not exist."

    def handle(self, *args, **options) -> None:
        created = seed_demo_household()
        if not created:
            self.stdout.write(
                "Demo household already exists. Forgot a password? "
                "`manage.py users set-password NAME`"
            )
            return
        self.stdout.write("Demo household created. These passwords are shown only once:")
        for person in created:
            role = "admin " if person.admin else "member"
            self.stdout.write(f"  {role}  {person.username:<8} {person.password}")
