"""The demo household `make run` creates: one admin and two members."""

from __future__ import annotations

import logging
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.accounts.models import User
from apps.accounts.services import user_create
from apps.demo.pdf import ALICE_PDF, BOB_PDF, DemoPdf, render
from apps.library.models import Source
from apps.library.services import SyncReport, source_register, source_sync

logger = logging.getLogger(__name__)
TEMPLATES = Path(__file__).resolve().parent / "demo_vaults"

DEMO_PEOPLE = (
    # username, display name, admin
    ("admin", "Household admin", True),
    ("alice", "Alice", False),
    ("bob", "Bob", False),
)
# Members get the everyday features; cloud models stay an explicit admin grant.
DEMO_GROUP = "adults"
DEMO_GROUP_FLAGS = (permissions.USE_AGENT_CHATS, permissions.RUN_PAPER_DIGEST)


@dataclass
class Created:
    username: str
    password: str
    admin: bool


def demo_group() -> Group:
    group, _ = Group.objects.get_or_create(name=DEMO_GROUP)
    codenames = [permissions.codename(flag) for flag in DEMO_GROUP_FLAGS]
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="accounts", codename__in=codenames)
    )
    return group


def seed_demo_household() -> list[Created]:
    """Create the demo people that do not exist yet; return who was created
    with their one-time passwords (existing people are left alone)."""
    created = []
    group = demo_group()
    for username, display_name, admin in DEMO_PEOPLE:
        if User.objects.filter(username__iexact=username).exists():
            continue
        password = secrets.token_urlsafe(9)
        user = user_create(
            username=username,
            password=password,
            display_name=display_name,
            is_admin=admin,
            validate=False,
        )
        if not admin:
            user.groups.add(group)
        created.append(Created(username=username, password=password, admin=admin))
    return created


@dataclass(frozen=True)
class DemoVault:
    username: str
    pdf_path: str
    pdf: DemoPdf
    sharing: str


DEMO_VAULTS = (
    # Alice shares her notes with the household (her private/ folder stays hers).
    DemoVault("alice", "reading/heat-pumps.pdf", ALICE_PDF, Source.Sharing.HOUSEHOLD),
    DemoVault("bob", "reading/growing-garlic.pdf", BOB_PDF, Source.Sharing.OWNER),
)
DEMO_SOURCE_NAME = "Demo vault"


class _Operator:
    """Seeding registers folders as the server operator would."""

    def has_perm(self, perm: str) -> bool:
        return True


def _copy_private(template: Path, folder: Path) -> None:
    # Not copytree: it copies the modes of the repository's world-readable files
    # and folders; these copies get this process's private ones (umask 077).
    for path in sorted(template.rglob("*")):
        target = folder / path.relative_to(template)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def seed_demo_vaults(vaults_root: Path) -> list[tuple[str, SyncReport]]:
    """Copy each demo member's vault under the vaults root (if it is not there
    yet), register it as their source and sync it. Idempotent."""
    done = []
    for spec in DEMO_VAULTS:
        user = User.objects.filter(username=spec.username).first()
        if user is None or Source.objects.filter(owner=user, name=DEMO_SOURCE_NAME).exists():
            continue
        folder = vaults_root / spec.username
        if not folder.exists():
            _copy_private(TEMPLATES / spec.username, folder)
            pdf = folder / spec.pdf_path
            pdf.parent.mkdir(parents=True, exist_ok=True)
            pdf.write_bytes(render(spec.pdf))
        source = source_register(
            actor=_Operator(),
            owner=user,
            name=DEMO_SOURCE_NAME,
            path=str(folder),
            sharing=spec.sharing,
            # Both policies visible on the demo: the notes may reach a cloud
            # model, each person's private/ folder never does (always local-only).
            cloud=Source.Cloud.ALLOWED,
        )
        done.append((spec.username, source_sync(source=source)))
    return done
