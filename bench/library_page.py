"""The library page at 20,000 documents, and upload-to-searchable time.

1. Fills a throwaway instance with N documents (default 20,000) spread over a
   household (own vault, uploads, papers, web pages, a shared vault), then
   measures the server time of the library page as a signed-in person sees it:
   first page, a deep page, kind and record filters, latest-only. Prints
   p50/p95 per view (Django's test client in-process: server time, no network).
2. Starts a real Huey worker, uploads a generated 20-page PDF through the
   upload view, and reports the seconds until `search()` finds its text.

    .venv/bin/python bench/library_page.py [--documents 20000] [--requests 40]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _support import ROOT, corpus_paragraphs, django_in, percentile


def fill(documents: int) -> object:
    from django.db import transaction
    from django.utils import timezone

    from apps.accounts.services import user_create
    from apps.library.models import Document, DocumentTag, Source

    user = user_create(username="bench", password="x" * 12, validate=False)
    other = user_create(username="other", password="x" * 12, validate=False)
    layout = [
        (user, "Vault", "vault", "owner", "note", 0.5),
        (user, "Uploads", "uploads", "owner", "pdf", 0.1),
        (user, "Papers", "papers", "owner", "paper", 0.1),
        (user, "Web", "uploads", "owner", "web", 0.05),
        (other, "Family", "vault", "household", "note", 0.25),
    ]
    rng = random.Random(3)
    today = timezone.now().date()
    for owner, name, kind, sharing, doc_kind, share in layout:
        source = Source.objects.create(owner=owner, name=name, kind=kind, sharing=sharing)
        count = int(documents * share)
        with transaction.atomic():
            created = Document.objects.bulk_create(
                [
                    Document(
                        source=source,
                        path=f"{name.lower()}/folder-{i % 40}/doc-{i}.md",
                        title=f"{name} document {i}",
                        kind=doc_kind,
                        content_hash=f"{source.pk}-{i}",
                        status="ready",
                        effective_date=today.replace(day=1) if i % 3 else today,
                        date_source="filename",
                        family=f"{name}/{i // 3}",
                        is_latest=i % 3 == 2,
                        category="job_application" if i % 50 == 0 else "",
                        record_status="interviewing" if i % 100 == 0 else "",
                        in_private_dir=i % 20 == 0,
                    )
                    for i in range(count)
                ],
                batch_size=2000,
            )
            DocumentTag.objects.bulk_create(
                [
                    DocumentTag(document=d, tag=rng.choice(["remote", "urgent", "home"]))
                    for d in created[::10]
                ]
            )
    return user


def time_views(user, requests: int) -> None:
    from django.test import Client

    client = Client()
    client.force_login(user)
    views = {
        "first page": "/library/",
        "page 150": "/library/?page=150",
        "papers": "/library/?kind=papers",
        "records (category + status)": "/library/?category=job_application&status=interviewing",
        "tag": "/library/?tag=urgent",
        "latest only": "/library/?latest=1",
        "htmx partial": "/library/?page=2",
    }
    for label, url in views.items():
        headers = {"HTTP_HX_REQUEST": "true"} if label == "htmx partial" else {}
        client.get(url, **headers)  # warm
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url, **headers)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        print(
            f"  {label:<30} p50 {percentile(times, 50):6.1f} ms   p95 {percentile(times, 95):6.1f} ms"
        )


def upload_to_searchable(user, data_dir: Path) -> None:
    import pymupdf
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    from apps.library.index.embeddings import get_embedder
    from apps.library.models import Document
    from apps.library.search import search

    paragraphs = corpus_paragraphs(60)
    pdf = pymupdf.open()
    for n in range(20):
        page = pdf.new_page()
        text = " ".join(paragraphs[(n * 3 + k) % len(paragraphs)] for k in range(3))
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 790), text, fontsize=9)
    marker = "Zanzibar quince orchard telemetry"
    pdf[19].insert_text((50, 800), marker, fontsize=9)
    data = pdf.tobytes()
    get_embedder().embed_query("warm the query model")

    env = dict(os.environ)
    worker = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "run_huey", "--workers", "1"],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        time.sleep(3)  # let the worker start (and idle) before the clock starts
        client = Client()
        client.force_login(user)
        started = time.perf_counter()
        client.post("/library/add/upload/", {"files": [SimpleUploadedFile("bench.pdf", data)]})
        while True:
            document = Document.objects.filter(path="bench.pdf").first()
            if document and document.status == "failed":
                raise SystemExit(f"ingest failed: {document.error}")
            if document and document.status == "ready":
                hits = search(user=user, query=marker, limit=5).results
                if any(marker.split()[0] in r.text for r in hits):
                    break
            if time.perf_counter() - started > 120:
                raise SystemExit("not searchable after 120 s")
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        print(
            f"upload of a 20-page PDF to searchable: {seconds:.1f} s ({document.chunks.count()} passages)"
        )
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="jarvis-bench-page-"))
    django_in(data_dir, JARVIS_ALLOWED_HOSTS="testserver,localhost")
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)  # pages link hashed files
    started = time.perf_counter()
    user = fill(args.documents)
    print(f"{args.documents} documents created in {time.perf_counter() - started:.0f}s")
    print("library page, server time:")
    time_views(user, args.requests)
    upload_to_searchable(user, data_dir)


if __name__ == "__main__":
    main()
