"""The fixtures and helpers tests in more than one folder use, as one pytest
plugin (registered by `pytest_plugins` in tests/conftest.py), so no folder
imports another folder's conftest.

- `signed_in(user)`: a test client signed in as `user`;
- the library's: `vaults_root`, `make_vault`, `vault`, `make_source` and a
  counting `embedder` (the real embedding model; it loads offline in a
  fraction of a second and embeds a test vault in about a second);
- the chat's: the fake OpenAI-compatible server `llm` (tests/fakes/llm.py)
  registered as `local_model` or `cloud_model`, a `cloud_user` allowed cloud
  models, and `run_turn`, one turn through the real runner;
- the MCP household (`household`): shared, local-only and another person's
  notes with a planted `MARKER` that must never come out where it should not.

A folder's own conftest may still override any of these by name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group, Permission
from django.test import Client

from apps.accounts import permissions
from apps.library.index.embeddings import get_embedder
from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from apps.library.services.sources import source_register
from apps.projects.services import registry_refresh
from tests.fakes.llm import FakeOpenAI

# --- Signing in -------------------------------------------------------------


def signed_in(user, *, csrf: bool = False, **options) -> Client:
    """A test client signed in as `user`; `csrf=True` (or Client's own
    `enforce_csrf_checks=True`) enforces CSRF checks as a browser's request
    meets them (the test client skips them otherwise). Other options go to
    the Client."""
    client = Client(**{"enforce_csrf_checks": csrf, **options})
    client.force_login(user)
    return client


# --- The library: vaults, sources, a counting embedder -----------------------


class Operator:
    """Registers folders the way the CLI operator does (every permission)."""

    def has_perm(self, perm: str) -> bool:
        return True


class Vault:
    """A folder of notes a test writes into (relative paths, UTF-8 text)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, text: str, *, mtime: float | None = None) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return path

    def write_bytes(self, rel: str, data: bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink()

    def rename(self, old: str, new: str) -> None:
        target = self.root / new
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.root / old).rename(target)


class CountingEmbedder:
    """The real embedder, counting how many passages it was asked to embed."""

    def __init__(self) -> None:
        self.inner = get_embedder()
        self.name = self.inner.name
        self.dimension = self.inner.dimension
        self.passages = 0
        self.queries = 0

    def embed_passages(self, texts):
        self.passages += len(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text):
        self.queries += 1
        return self.inner.embed_query(text)


@pytest.fixture
def vaults_root(tmp_path, settings) -> Path:
    root = tmp_path / "vaults"
    root.mkdir()
    settings.VAULTS_ROOT = root
    return root


@pytest.fixture
def make_vault(vaults_root):
    def make(name: str) -> Vault:
        folder = vaults_root / name
        folder.mkdir(parents=True, exist_ok=True)
        return Vault(folder)

    return make


@pytest.fixture
def vault(make_vault) -> Vault:
    """The owner's vault folder (empty; register it with `make_source`)."""
    return make_vault("olivia")


@pytest.fixture
def make_source():
    def make(owner, vault: Vault, *, name: str | None = None, **options):
        return source_register(
            actor=Operator(),
            owner=owner,
            name=name or f"{owner.username} vault",
            path=str(vault.root),
            **options,
        )

    return make


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


# --- The chat: a fake model over real HTTP, and one turn --------------------


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def local_model(llm, transactional_db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="home", kind="openai", base_url=llm.base_url, location="local"
    )
    return model_add(connection=connection, model_id="local-7b", supports_tools=True, default=True)


@pytest.fixture
def cloud_model(llm, transactional_db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="cloud",
        kind="openai",
        base_url=llm.base_url,
        location="cloud",
        api_key="sk-cloud-secret-123456",
    )
    return model_add(connection=connection, model_id="big", supports_tools=True)


@pytest.fixture
def cloud_user(owner):
    group = Group.objects.create(name="cloud users")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_CLOUD_MODELS))
    )
    owner.groups.add(group)
    return type(owner).objects.get(pk=owner.pk)


def run_turn(user, text: str, *, chat=None, model: str = "", mentions=None):
    """Send `text` and wait for the whole reply (the same code as the browser)."""
    from apps.chats import services
    from apps.chats.runner import reply_start

    chat, _, answer = services.turn_start(
        user=user, chat=chat, text=text, model_label=model, mentions=mentions
    )

    async def wait():
        await reply_start(answer.pk, chat.pk).task

    async_to_sync(wait)()
    answer.refresh_from_db()
    chat.refresh_from_db()
    return chat, answer


# --- The MCP household: a marker that must stay where it is ----------------

MARKER = "zebracorn-4417"  # in Olivia's private and local-only notes
MAX_MARKER = "walrus-5150"  # in Max's own (owner-only) notes: his, nobody else's

SHARED_NOTES = {
    "boiler_2025-03.md": "# Boiler\n\nThe boiler was serviced on 3 March 2025 by Hale & Sons.\n",
    "boiler_2026-03.md": "# Boiler\n\nThe boiler was serviced on 9 March 2026 by Brightwarm.\n",
    "handover.md": (
        "# Weekly handover\n\n## Garden\nThe quince tree needs pruning before the frost.\n\n"
        f"## Health <!-- private -->\nBlood pressure code {MARKER} from the clinic.\n\n"
        "## Plans\nRepaint the shed in the spring.\n"
    ),
    "private/diary.md": f"# Diary\n\nThe quince orchard secret is {MARKER}.\n",
    "projects/shed.md": (
        "# Shed rebuild\n\n## Status: PAUSED\n\n"
        f"## Why paused <!-- private -->\n- The {MARKER} diagnosis: no lifting until spring\n\n"
        "## Next steps\n- Order the timber\n"
    ),
    "projects/pixelnet.md": (
        "# PixelNet — From-Scratch Image Classifier\n\n## Status: DONE\n\n"
        "### Key Numbers\n- Test accuracy: 91.3% on CIFAR-10\n"
    ),
}


@pytest.fixture
def household(owner, member, make_vault, make_source, embedder):
    shared = make_vault("olivia-shared")
    for path, text in SHARED_NOTES.items():
        shared.write(path, text)
    source_sync(
        source=make_source(
            owner,
            shared,
            name="home",
            sharing=Source.Sharing.HOUSEHOLD,
            cloud=Source.Cloud.ALLOWED,
            project_dirs=["projects"],
        ),
        embedder=embedder,
    )
    local = make_vault("olivia-local")
    local.write("tax.md", f"# Tax\n\nThe accountant's reference is {MARKER}, quince orchard.\n")
    local.write(
        "taxes_project.md",
        f"---\ntype: project\nstatus: blocked\n---\n# Tax return\n\nWaiting, ref {MARKER}.\n",
    )
    source_sync(source=make_source(owner, local, name="local"), embedder=embedder)
    theirs = make_vault("max-own")
    theirs.write("gifts.md", f"# Gifts\n\nOlivia's birthday present: quince jam, {MAX_MARKER}.\n")
    source_sync(
        source=make_source(member, theirs, name="max", cloud=Source.Cloud.ALLOWED),
        embedder=embedder,
    )
    report = registry_refresh(embedder=embedder)
    assert not report.problems, report.problems
