"""Search latency at 100,000 chunks, and the KNN leg against a numpy scan.

Builds a throwaway index of N synthetic 384-d chunks (default 100,000) spread
over a household like a real one: the benchmark user owns a large vault, their
uploads and a PDF inbox (with private folders and older versions), and another
member shares a vault with the household; a third person's private notes are in
the index but invisible to the user.

The synthetic chunks are built from real text so both legs see realistic data:
a few thousand paragraphs of English (docstrings of the Python standard
library) are embedded with the real model as anchors; every chunk is an anchor
with noise added to its vector (and its words shuffled a little for FTS), so
the index has the dense neighbourhoods real notes have. Queries are fragments
of anchor paragraphs, embedded at query time.

Prints:
- p50/p95 of `search()` including query embedding (limit 10);
- p50/p95 of the KNN leg alone, beside a numpy brute-force scan of the same
  visible float vectors on the same machine, and their ratio;
- recall@10 of the KNN leg against exact search over the same visible chunks.

    .venv/bin/python bench/search_latency.py [--chunks 100000] [--queries 100]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from _support import corpus_paragraphs, django_in, percentile


def build(chunks: int, anchors: int, rng: random.Random):
    from django.db import connection, transaction

    from apps.accounts.services import user_create
    from apps.library.index import fts, tables
    from apps.library.index.embeddings import get_embedder
    from apps.library.models import Chunk, Document, Source

    paragraphs = corpus_paragraphs(anchors)
    print(f"embedding {len(paragraphs)} anchor paragraphs with the real model…", flush=True)
    started = time.perf_counter()
    anchor_vectors = get_embedder().embed_passages(paragraphs)
    print(f"  {time.perf_counter() - started:.0f}s", flush=True)

    user = user_create(username="bench", password="x" * 12, validate=False)
    member = user_create(username="member", password="x" * 12, validate=False)
    other = user_create(username="other", password="x" * 12, validate=False)
    layout = [  # owner, name, kind, sharing, share of chunks, private share
        (user, "Vault", "vault", "owner", 0.45, 0.15),
        (user, "Uploads", "uploads", "owner", 0.08, 0.0),
        (user, "Inbox", "inbox", "owner", 0.07, 0.0),
        (member, "Family vault", "vault", "household", 0.2, 0.1),
        (other, "Notes", "vault", "owner", 0.2, 0.0),
    ]
    state = tables.index_state()
    noise = 0.8 / np.sqrt(384)
    np_rng = np.random.default_rng(7)
    made = 0
    for owner, name, kind, sharing, share, private_share in layout:
        source = Source.objects.create(owner=owner, name=name, kind=kind, sharing=sharing)
        count = int(chunks * share) if owner is not other else chunks - made
        made += count
        per_document = 10
        with transaction.atomic():
            documents = Document.objects.bulk_create(
                [
                    Document(
                        source=source,
                        path=f"notes/{name.lower()}-{i}.md",
                        title=f"{name} note {i}",
                        kind="note",
                        content_hash=f"{source.pk}-{i}",
                        status="ready",
                        family=f"file:{i}",
                        # Roughly one in eight documents is an older version.
                        is_latest=rng.random() > 0.12,
                        in_private_dir=rng.random() < private_share,
                    )
                    for i in range(max(1, count // per_document))
                ]
            )
            rows, vectors = [], []
            for n in range(count):
                document = documents[n % len(documents)]
                pick = rng.randrange(len(paragraphs))
                words = paragraphs[pick].split()
                start = rng.randrange(max(1, len(words) - 40))
                text = " ".join(words[start : start + rng.randint(40, 120)])
                vector = anchor_vectors[pick] + noise * np_rng.standard_normal(384)
                vectors.append((vector / np.linalg.norm(vector)).astype(np.float32))
                rows.append(
                    Chunk(
                        document=document,
                        ordinal=n,
                        text=text,
                        header=document.title,
                        text_hash=str(n),
                        is_latest=document.is_latest,
                    )
                )
            created = Chunk.objects.bulk_create(rows, batch_size=2000)
            by_document = {d.pk: d for d in documents}
            codes = tables.to_codes(vectors, state)
            with connection.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {tables.FTS_TABLE}(rowid, title, path, text) VALUES (%s, %s, %s, %s)",
                    [
                        (c.id, c.header, fts.path_words(by_document[c.document_id].path), c.text)
                        for c in created
                    ],
                )
                cursor.executemany(
                    f"INSERT INTO {tables.emb_table(state.generation)}(chunk_id, vector) VALUES (%s, %s)",
                    [(c.id, tables.to_blob(v)) for c, v in zip(created, vectors, strict=True)],
                )
                cursor.executemany(
                    tables._VEC_INSERT.format(table=tables.vec_table(state.generation)),
                    [
                        (
                            c.id,
                            tables.partition_for(
                                source.pk,
                                by_document[c.document_id].in_private_dir,
                                c.is_latest,
                                c.id,
                                state.buckets,
                            ),
                            code,
                        )
                        for c, code in zip(created, codes, strict=True)
                    ],
                )
        print(f"  {name}: {count} chunks", flush=True)
    return user, paragraphs


def visible_matrix(user):
    """The float vectors `user` may see (what the numpy scan compares against)."""
    from django.db import connection

    from apps.library import search
    from apps.library.index import tables
    from apps.library.search import query
    from apps.library.selectors import visible_pools

    state = tables.index_state()
    pools = visible_pools(user)
    where, params = query.where_sql(pools, search.Filters(), latest_only=False)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, e.vector FROM library_chunk c JOIN library_document d ON d.id = c.document_id "
            f"JOIN {tables.emb_table(state.generation)} e ON e.chunk_id = c.id WHERE {where}",
            params,
        )
        rows = cursor.fetchall()
    ids = np.array([r[0] for r in rows])
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return ids, matrix, pools


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--anchors", type=int, default=1500)
    parser.add_argument("--reranker-url", help="also measure this /rerank endpoint")
    parser.add_argument("--reranker-api", choices=["jina", "tei"], default="jina")
    parser.add_argument("--reranker-dir", help="also measure this cross-encoder ONNX export")
    parser.add_argument(
        "--fake-reranker",
        action="store_true",
        help="also measure the word-overlap stand-in /rerank server of tests/fakes/rerank.py",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="build the index here and keep it; a later run with the same dir reuses it",
    )
    args = parser.parse_args()
    rng = random.Random(11)

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="jarvis-bench-latency-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    django_in(data_dir)
    from apps.accounts.models import User
    from apps.library import search
    from apps.library.index import tables
    from apps.library.index.embeddings import get_embedder
    from apps.library.models import Chunk
    from apps.library.search import legs

    started = time.perf_counter()
    if User.objects.filter(username="bench").exists() and Chunk.objects.count() == args.chunks:
        user, paragraphs = User.objects.get(username="bench"), corpus_paragraphs(args.anchors)
        print(f"reusing the index in {data_dir}")
    else:
        user, paragraphs = build(args.chunks, args.anchors, rng)
        print(f"built the index in {time.perf_counter() - started:.0f}s")

    queries = []
    picker = random.Random(12)  # its own stream: a reused index gets the same queries
    for _ in range(args.queries):
        words = picker.choice(paragraphs).split()
        start = picker.randrange(max(1, len(words) - 12))
        queries.append(" ".join(words[start : start + picker.randint(5, 12)]))

    for query in queries[:5]:  # warm caches and the model
        search.search(user=user, query=query, limit=10)

    totals, search_cpu = [], []
    for query in queries:
        c, t = _cpu(), time.perf_counter()
        search.search(user=user, query=query, mode="lookup", limit=10, reranker=None)
        totals.append((time.perf_counter() - t) * 1000)
        search_cpu.append((_cpu() - c) * 1000)
    reranked = measure_reranker(args, user, queries)

    state = tables.index_state()
    ids, matrix, pools = visible_matrix(user)
    embedder = get_embedder()
    vectors = [embedder.embed_query(q) for q in queries]
    knn, scan, recalls, found = [], [], [], []
    # The two in separate loops: BLAS threads spin for a while after a
    # matrix product, and that CPU would be charged to a KNN leg measured
    # right after one.
    c = _cpu()
    for vector in vectors:
        t = time.perf_counter()
        found.append(legs.vector_leg(vector, pools, search.Filters(), False, state))
        knn.append((time.perf_counter() - t) * 1000)
    knn_cpu = _cpu() - c
    c = _cpu()
    for vector, ours in zip(vectors, found, strict=True):
        t = time.perf_counter()
        scores = matrix @ vector
        top = np.argpartition(-scores, 10)[:10]
        exact = ids[top[np.argsort(-scores[top])]]
        scan.append((time.perf_counter() - t) * 1000)
        recalls.append(len(set(exact.tolist()) & set(ours[:10])) / 10)
    scan_cpu = _cpu() - c

    print(f"\nindex: {args.chunks} chunks; the user may see {len(ids)} of them")
    print(
        f"search() incl. query embedding: p50 {percentile(totals, 50):.1f} ms, p95 {percentile(totals, 95):.1f} ms"
        f" (CPU time p50 {percentile(search_cpu, 50):.1f} ms, p95 {percentile(search_cpu, 95):.1f} ms)"
    )
    print(
        f"KNN leg (bit codes + float re-score): p50 {percentile(knn, 50):.1f} ms, p95 {percentile(knn, 95):.1f} ms"
    )
    print(
        f"numpy brute-force scan of the same vectors: p50 {percentile(scan, 50):.1f} ms, p95 {percentile(scan, 95):.1f} ms"
    )
    print(f"KNN / numpy (p50): {percentile(knn, 50) / percentile(scan, 50):.2f}x")
    # CPU seconds (every thread of this process): less at the mercy of other
    # processes on a shared machine than wall time is.
    print(
        f"CPU per query: KNN {1000 * knn_cpu / len(vectors):.1f} ms, numpy "
        f"{1000 * scan_cpu / len(vectors):.1f} ms, ratio {knn_cpu / max(scan_cpu, 1e-9):.2f}x"
    )
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"KNN recall@10 against exact search: {np.mean(recalls):.3f}")
    if reranked:
        print(
            f"reranker ({reranked['name']}) over the top 30: added p50 "
            f"{percentile(reranked['ms'], 50):.1f} ms, p95 {percentile(reranked['ms'], 95):.1f} ms"
        )
    print(
        f"settings: {state.code_bits}-bit codes, {state.buckets} buckets, "
        f"{legs.BIT_CANDIDATES} candidates per partition, {legs.RESCORE_CANDIDATES} re-scored, "
        f"{legs.KNN_THREADS} threads"
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure_reranker(args, user, queries) -> dict | None:
    """The reranker's own milliseconds per search, when one is given."""
    from apps.library import search
    from apps.library.search.rerank import DirectoryReranker, EndpointReranker

    fake = None
    if args.fake_reranker:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.fakes.rerank import FakeRerank

        fake = FakeRerank().start()
        args.reranker_url = fake.base_url
    if args.reranker_url:
        reranker = EndpointReranker(
            base_url=args.reranker_url, api_key=None, model="", api=args.reranker_api, cloud=False
        )
    elif args.reranker_dir:
        reranker = DirectoryReranker(str(Path(args.reranker_dir).resolve()))
    else:
        return None
    try:
        search.search(user=user, query=queries[0], limit=10, reranker=reranker)  # load it
        ms = [
            search.search(user=user, query=q, limit=10, reranker=reranker).rerank_ms
            for q in queries
        ]
    finally:
        if fake is not None:
            fake.stop()
    return {"name": reranker.name, "ms": ms}


if __name__ == "__main__":
    main()
