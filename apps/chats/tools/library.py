"""Library tools: search, read and list what the person may read; add a web
page or paper; correct a paper's metadata; ask to remove a document (a card
only the person's click acts on). On a cloud model every read is filtered to
cloud-allowed content inside `search()` and the document lookups."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db.models import Count

from apps.chats.tools.context import (
    DOCUMENT_PAGE_SIZE,
    LOCAL_ONLY_STOP,
    MIXED_CAVEAT,
    SEARCH_LIMIT,
    Passage,
    PrivacyStop,
    ToolError,
    TurnContext,
    as_read,
    newer_version_label,
    passage_from_result,
    wrap,
)
from apps.chats.tools.registry import Tool, register, tool_spec
from apps.core.errors import JarvisError
from apps.core.ids import parse_id, parse_ids
from apps.library.models import Document
from apps.library.search import Filters, chunk_result, search
from apps.library.selectors import (
    ListingFilters,
    chunks_visible_to,
    library_documents,
    visible_to,
)
from apps.library.services import (
    PaperPlan,
    document_metadata_update,
    paper_add,
    parse_arxiv_id,
    web_page_add,
)
from apps.library.tasks import ingest_queue


def _scope(ctx: TurnContext, filters) -> None:
    """A mention (@document or @collection) scopes the turn's searches to it."""
    documents = [m["id"] for m in ctx.mentions if m.get("kind") == "document"]
    collections = [m["id"] for m in ctx.mentions if m.get("kind") == "collection"]
    if documents:
        filters.document_ids = documents
    if collections:
        filters.source_ids = collections


def _as_list(value) -> list:
    # A model may send one id where the schema asks for a list of them.
    if isinstance(value, list):
        return value
    return [value] if value not in (None, "") else []


def search_notes(ctx: TurnContext, args: dict) -> str:
    query = str(args.get("query") or "").strip()
    if not query:
        raise ToolError("search_notes needs a query")
    filters, dropped = known_filters(ctx, args)
    mode = str(args.get("mode") or "auto")
    if mode not in ("auto", "present", "history", "lookup"):
        mode = "auto"
    found = passages_for(
        ctx, query=query, mode=mode, filters=filters, latest_only=bool(args.get("latest_only"))
    )
    note = ""
    if dropped:
        # A small model copies filter values it made up; a filter that matches
        # nothing in this library would only hide the answer.
        note = f"Ignored filters that match nothing in this library: {', '.join(dropped)}. "
    if not found.passages:
        return f"{note}No passages match {query!r} (time mode {found.mode})."
    return note + found.text


@dataclass
class Found:
    """A turn's search: the mode it ran in, the relevant passages (numbered
    for this turn) and their text as the model reads it."""

    mode: str
    passages: list[Passage]
    text: str


def passages_for(
    ctx: TurnContext,
    *,
    query: str,
    mode: str = "auto",
    filters: Filters | None = None,
    latest_only: bool = False,
    limit: int = SEARCH_LIMIT,
    max_chars: int | None = None,
    budget: int | None = None,
) -> Found:
    """Search as the person (on a cloud model: cloud-allowed content only, and
    the hold-back rule) and number the relevant passages for this turn. The
    same search asked twice in a turn (the first search, then the model's own
    call with the question) runs once. `budget` bounds the passages' text
    together (at least one passage is kept): the passages in rank order
    until the next would pass it."""
    filters = filters or Filters()
    _scope(ctx, filters)
    key = (query, mode, repr(filters), latest_only, ctx.cloud)
    cache = ctx.extras.setdefault("searches", {})
    if key not in cache:
        response = search(
            user=ctx.user,
            query=query,
            mode=mode,
            limit=SEARCH_LIMIT,
            cloud_only=ctx.cloud,
            filters=filters,
            latest_only=latest_only,
            for_cloud_model=ctx.cloud,  # a cloud reranker only then: that model gets the query
            with_everything=ctx.cloud,  # for the hold-back rule, from the same legs
        )
        if ctx.cloud:
            _hold_back(ctx, response.everything.relevant)
        cache[key] = response
    response = cache[key]
    relevant = _within(response.relevant[:limit], max_chars, budget)
    passages = [ctx.number(passage_from_result(r, ctx.user)) for r in relevant]
    # A result's note (e.g. a newer version of it could not be read) travels with it.
    lines = [
        f"{p.label()}\n{_cut(as_read(p.result.text), max_chars)}"
        + (f"\n(Note: {p.result.note})" if p.result.note else "")
        for p in passages
    ]
    footer = f"Time mode: {response.mode}."
    if ctx.cloud and MIXED_CAVEAT in ctx.caveats:
        footer += " " + MIXED_CAVEAT
    return Found(mode=response.mode, passages=passages, text=wrap(lines, footer))


def _within(results: list, max_chars: int | None, budget: int | None) -> list:
    if budget is None:
        return results
    kept, spent = [], 0
    for result in results:
        spent += len(_cut(result.text, max_chars))
        if kept and spent > budget:
            break
        kept.append(result)
    return kept


def _cut(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[:max_chars].rsplit(" ", 1)[0] + " …"


def known_filters(ctx: TurnContext, args: dict) -> tuple[Filters, list[str]]:
    """The search's filters from a tool call's arguments, without those that
    match no value in the person's library (said back to the model)."""
    dropped: list[str] = []
    documents = visible_to(ctx.user)
    collections = parse_ids(_as_list(args.get("collections"))) or None
    if collections:
        known = set(documents.filter(source_id__in=collections).values_list("source_id", flat=True))
        if not known:
            dropped.append(f"collections={collections}")
            collections = None
    values = {}
    for name, column in (
        ("category", "category"),
        ("status", "record_status"),
        ("entity", "entity"),
    ):
        value = str(args.get(name) or "").strip()
        if value and not documents.filter(**{f"{column}__iexact": value}).exists():
            dropped.append(f"{name}={value!r}")
            value = ""
        values[name] = value
    raw_tags = args.get("tags") or []
    tags = [str(t) for t in raw_tags] if isinstance(raw_tags, list) else [str(raw_tags)]
    kept_tags = []
    for tag in tags:
        if documents.filter(tag_rows__tag=tag.lstrip("#").lower()).exists():
            kept_tags.append(tag)
        else:
            dropped.append(f"tag={tag!r}")
    filters = Filters(source_ids=collections, tags=kept_tags, **values)
    return filters, dropped


def _hold_back(ctx: TurnContext, matches: list) -> None:
    """On a cloud model, what the question matches among everything the
    person may read (`matches`: the search's `everything` view). Only
    passages past the relevance floor count (the semantic leg always returns
    nearest neighbours, so "nothing relevant" is a real answer: a general
    question is then answered as one). If every relevant match is
    local-only, nothing is sent (PrivacyStop); if some are, the reply
    carries the fixed caveat."""
    held_back = [r for r in matches if r.cloud == "local-only"]
    if held_back and len(held_back) == len(matches):
        raise PrivacyStop(LOCAL_ONLY_STOP)
    if held_back:
        ctx.caveat(MIXED_CAVEAT)


def _readable_document(ctx: TurnContext, document_id) -> Document:
    pk = parse_id(document_id)
    if pk is None:
        raise ToolError("document_id must be a document's number")
    document = visible_to(ctx.user).select_related("source").filter(pk=pk).first()
    local_only = document is not None and (
        document.in_private_dir or document.source.cloud != "allowed"
    )
    if document is None or (ctx.cloud and local_only):
        # Another person's document, or one a cloud model may not read: the same answer.
        raise ToolError(f"document {document_id} not found")
    return document


def get_document(ctx: TurnContext, args: dict) -> str:
    document = _readable_document(ctx, args.get("document_id"))
    page = max(1, int(args.get("page") or 1))
    chunks = list(
        chunks_visible_to(ctx.user, document, cloud_only=ctx.cloud).select_related(
            "document__source"
        )
    )
    start = (page - 1) * DOCUMENT_PAGE_SIZE
    shown = chunks[start : start + DOCUMENT_PAGE_SIZE]
    if not shown:
        return f"Document {document.pk} has {len(chunks)} passages; page {page} is past the end."
    newer = "" if document.is_latest else newer_version_label(document, ctx.user)
    lines = []
    for chunk in shown:
        passage = ctx.number(
            Passage(
                result=chunk_result(chunk),
                superseded_by=newer if not chunk.is_latest else "",
            )
        )
        lines.append(f"{passage.label()}\n{as_read(passage.result.text)}")
    pages = -(-len(chunks) // DOCUMENT_PAGE_SIZE)
    return wrap(lines, f"Page {page} of {pages} of document {document.pk}.")


def list_documents(ctx: TurnContext, args: dict) -> str:
    filters = ListingFilters(
        source=parse_id(str(args.get("collection") or "")),
        kind=str(args.get("kind") or ""),
        category=str(args.get("category") or ""),
        status=str(args.get("status") or ""),
        entity=str(args.get("entity") or ""),
        tag=str(args.get("tag") or "").lstrip("#").lower(),
        latest=bool(args.get("latest_only")),
    )
    documents = library_documents(ctx.user, filters)
    if ctx.cloud:
        documents = documents.filter(in_private_dir=False, source__cloud="allowed")
    limit = min(int(args.get("limit") or 30), 100)
    rows = list(documents[:limit])
    if not rows:
        return "No documents match."
    lines = []
    for d in rows:
        when = d.shown_date.isoformat() if d.shown_date else "undated"
        record = f" · {d.category}/{d.record_status}" if d.category else ""
        version = "latest" if d.is_latest else "older version"
        lines.append(
            f"#{d.pk} {d.title} · {d.get_kind_display()} · {d.path} · {when} · {version}{record}"
        )
    return wrap(lines, f"{len(rows)} of {documents.count()} documents.")


def library_stats(ctx: TurnContext, args: dict) -> str:
    documents = visible_to(ctx.user)
    if ctx.cloud:
        documents = documents.filter(in_private_dir=False, source__cloud="allowed")
    kinds = dict(documents.values_list("kind").annotate(n=Count("id")).order_by())
    categories = {}
    for category, status, n in (
        documents.exclude(category="")
        .values_list("category", "record_status")
        .annotate(n=Count("id"))
        .order_by()
    ):
        categories.setdefault(category, {})[status or "(no status)"] = n
    return json.dumps({"documents": documents.count(), "by_kind": kinds, "records": categories})


def add_document(ctx: TurnContext, args: dict) -> str:
    target = str(args.get("url_or_arxiv") or "").strip()
    if not target:
        raise ToolError("add_document needs url_or_arxiv")
    try:
        if parse_arxiv_id(target) is not None:
            outcome = paper_add(owner=ctx.user, text=target)
            if isinstance(outcome, PaperPlan):
                ingest_queue(outcome.document, meta=outcome.document_meta)
                return (
                    f"Queued “{outcome.meta.title}” as document {outcome.document.pk};"
                    " it is being indexed now."
                )
        else:
            outcome = web_page_add(owner=ctx.user, url=target)
            if outcome.document is not None:
                ingest_queue(outcome.document)
                return (
                    f"Queued the page as document {outcome.document.pk}; it is being indexed now."
                )
    except JarvisError as exc:
        raise ToolError(str(exc)) from exc
    known = ", ".join(f"#{d.pk} “{d.title}”" for d in outcome.existing)
    return f"Already in the library: {known}. Ask the person whether to add it again."


def update_document_metadata(ctx: TurnContext, args: dict) -> str:
    document = _readable_document(ctx, args.get("document_id"))
    try:
        document_metadata_update(
            user=ctx.user,
            document=document,
            title=str(args.get("title") or document.title),
            authors=str(
                args.get("authors") if args.get("authors") is not None else document.authors
            ),
            doi=str(args.get("doi") if args.get("doi") is not None else document.doi),
        )
    except JarvisError as exc:
        raise ToolError(str(exc)) from exc
    return f"Updated the metadata of document {document.pk}."


def remove_document(ctx: TurnContext, args: dict) -> str:
    document = _readable_document(ctx, args.get("document_id"))
    if document.source.owner_id != ctx.user.pk:
        raise ToolError("only the owner can remove this document")
    ctx.cards.append(
        (
            "remove_document",
            {"document_id": document.pk, "title": document.title, "path": document.path},
            "pending",
        )
    )
    return (
        f"A confirmation card for removing “{document.title}” is now shown to the person. "
        "Nothing has been removed: only their click can remove it, and only from the library "
        "(files are never touched). Tell them it awaits their confirmation."
    )


# No example values: a small model copies them ("job_application", "a company").
_FILTERS = {
    "category": {"type": "string", "description": "a record category the library has"},
    "status": {"type": "string", "description": "a record status the library has"},
    "entity": {"type": "string", "description": "a record entity the library has"},
}


register(
    Tool(
        tool_spec(
            "search_notes",
            "Search the person's notes, papers and pages. Returns numbered passages with their "
            "date and whether they are the latest version. mode: present (current state), "
            "history (how something changed), lookup (anything), auto (decide from the wording). "
            "latest_only: leave out older versions entirely.",
            {
                "query": {"type": "string"},
                "mode": {"type": "string", "enum": ["auto", "present", "history", "lookup"]},
                "latest_only": {"type": "boolean"},
                "collections": {"type": "array", "items": {"type": "integer"}},
                **_FILTERS,
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            ["query"],
        ),
        search_notes,
    )
)

register(
    Tool(
        tool_spec(
            "get_document",
            "Read one document's passages in reading order, 15 per page.",
            {"document_id": {"type": "integer"}, "page": {"type": "integer"}},
            ["document_id"],
        ),
        get_document,
    )
)

register(
    Tool(
        tool_spec(
            "list_documents",
            "List documents with filters"
            " (kind: notes|papers|web, collection id, record fields, tag).",
            {
                "kind": {"type": "string"},
                "collection": {"type": "integer"},
                **_FILTERS,
                "tag": {"type": "string"},
                "latest_only": {"type": "boolean"},
                "limit": {"type": "integer"},
            },
        ),
        list_documents,
    )
)

register(
    Tool(
        tool_spec(
            "library_stats",
            "Counts of documents by kind, and the record categories and statuses that exist.",
            {},
        ),
        library_stats,
    )
)

register(
    Tool(
        tool_spec(
            "add_document",
            "Add a web page (URL) or an arXiv paper (id or URL) to the person's library.",
            {"url_or_arxiv": {"type": "string"}},
            ["url_or_arxiv"],
        ),
        add_document,
    )
)

register(
    Tool(
        tool_spec(
            "update_document_metadata",
            "Correct the title, authors or DOI of one of the person's papers or web pages.",
            {
                "document_id": {"type": "integer"},
                "title": {"type": "string"},
                "authors": {"type": "string"},
                "doi": {"type": "string"},
            },
            ["document_id"],
        ),
        update_document_metadata,
    )
)

register(
    Tool(
        tool_spec(
            "remove_document",
            "Ask the person to confirm removing a document from the library (never a file).",
            {"document_id": {"type": "integer"}},
            ["document_id"],
        ),
        remove_document,
    )
)
