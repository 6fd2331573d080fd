"""The library's front door: `document_add`, `DocumentMeta` and `ingest_queue`.
Known metadata reaches the indexed document through the queue (and from a
task an older Jarvis queued with loose keywords), a note Jarvis rewrites
keeps its id, nobody adds to another person's collection, and the one table
of image signatures types pictures for downloads and for models."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from apps.core.errors import Refused
from apps.library.formats import image_media_type
from apps.library.models import Document, Source
from apps.library.services import (
    DocumentMeta,
    document_add,
    document_ingest,
    upload_add,
    upload_refusal,
)
from apps.library.tasks import ingest_queue, ingest_task

pytestmark = pytest.mark.django_db

SOUP = b"# Leek soup\n\nBlend it smooth, then season.\n"


def _collection(owner, name="Kitchen") -> Source:
    return Source.objects.create(
        owner=owner, name=name, kind=Source.Kind.UPLOADS, cloud=Source.Cloud.ALLOWED
    )


def test_known_metadata_reaches_the_indexed_document_through_the_queue(
    owner, django_capture_on_commit_callbacks
):
    older = upload_add(owner=owner, name="old soup.md", data=b"# Soup\n\nAn older recipe.\n")
    added = upload_add(owner=owner, name="soup.md", data=SOUP)
    meta = DocumentMeta(
        title="Leek soup, the family way",
        authors="Gran",
        published=date(2019, 5, 4),
        replaces=[older.document.pk],
    )
    with django_capture_on_commit_callbacks(execute=True):
        ingest_queue(added.document, meta=meta)

    document = Document.objects.get(pk=added.document.pk)
    assert document.status == Document.Status.READY
    assert (document.title, document.authors) == ("Leek soup, the family way", "Gran")
    assert (document.effective_date, document.date_source) == (date(2019, 5, 4), "published")
    assert not Document.objects.filter(pk=older.document.pk).exists()  # replaced


def test_a_task_queued_with_the_old_loose_keywords_still_applies_them(owner):
    # What an ingest queued before DocumentMeta carried, still in the queue after an upgrade.
    added = upload_add(owner=owner, name="soup.md", data=SOUP)
    ingest_task(added.document.pk, title="Soup from the old queue", published="2020-01-02")

    document = Document.objects.get(pk=added.document.pk)
    assert document.status == Document.Status.READY
    assert document.title == "Soup from the old queue"
    assert document.effective_date == date(2020, 1, 2)


def test_metadata_is_plain_json_and_refuses_what_it_does_not_know():
    meta = DocumentMeta(title="A", published=date(2024, 2, 29), replaces=[3, 4])
    assert meta.to_json() == {"title": "A", "published": "2024-02-29", "replaces": [3, 4]}
    assert DocumentMeta.from_json(meta.to_json()) == meta
    with pytest.raises(TypeError):
        DocumentMeta.from_json({"date_override": "2024-02-29"})
    with pytest.raises(ValueError):
        DocumentMeta(published="29 February")


def test_a_note_rewritten_at_its_path_keeps_its_id_and_is_not_redone_when_unchanged(
    owner, embedder
):
    source = _collection(owner)
    first = document_add(
        owner=owner, source=source, name="menu.md", data=SOUP, kind="note", at="menu.md"
    )
    document_ingest(document=first.document, embedder=embedder)

    same = document_add(
        owner=owner, source=source, name="menu.md", data=SOUP, kind="note", at="menu.md"
    )
    assert same.document is None and same.unchanged.pk == first.document.pk

    changed = document_add(
        owner=owner,
        source=source,
        name="menu.md",
        data=b"# Menu\n\nPumpkin soup this week.\n",
        kind="note",
        at="menu.md",
    )
    assert changed.document.pk == first.document.pk
    assert document_ingest(document=changed.document, embedder=embedder).status == "ready"
    assert source.documents.count() == 1
    assert "Pumpkin" in "".join(changed.document.chunks.values_list("text", flat=True))


def test_bytes_are_typed_unless_the_caller_says_and_names_stay_free(owner):
    source = _collection(owner)
    one = document_add(owner=owner, source=source, name="Notes/soup.md", data=SOUP)
    two = document_add(owner=owner, source=source, name="Notes/soup.md", data=SOUP + b"More.\n")
    assert (one.document.kind, one.document.path) == ("note", "Notes/soup.md")
    assert two.document.path == "Notes/soup (2).md"
    refused = document_add(owner=owner, source=source, name="run.md", data=b"MZ\x90\x00" * 64)
    assert refused.document is None and "Windows program" in refused.error


def test_nobody_adds_to_another_persons_collection(owner, member):
    with pytest.raises(Refused):
        document_add(owner=member, source=_collection(owner), name="x.md", data=SOUP)
    assert not Document.objects.exists()


def test_the_upload_limit_is_one_rule(owner, settings):
    settings.UPLOAD_MAX_MB = 1
    assert upload_refusal(1024 * 1024) == ""
    assert upload_refusal(1024 * 1024 + 1) == "larger than the 1 MB limit"
    added = upload_add(owner=owner, name="big.md", data=b"a" * (1024 * 1024 + 1))
    assert (added.document, added.error) == (None, "larger than the 1 MB limit")


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00\x00\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"II*\x00\x08\x00\x00\x00\x00\x00", "image/tiff"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'>", None),
    ],
)
def test_one_table_types_the_pictures(head, media_type):
    assert image_media_type(head) == media_type


def test_every_library_module_is_public_or_behind_the_contract():
    # The forbidden contract lists the library's own modules by name, so a new
    # one would be public by default; this names it the moment it is added.
    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    door = next(c for c in contracts["contracts"] if "front door" in c["name"])
    public = {"apps", "formats", "models", "search", "selectors", "services", "tasks"}
    internal = {m.removeprefix("apps.library.") for m in door["forbidden_modules"]}
    assert {"search.*", "services.*"} <= internal  # the two packages' own modules
    library = root / "apps" / "library"
    names = {
        p.stem if p.is_file() else p.name
        for p in library.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert names - public - internal == set()
