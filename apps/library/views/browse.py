"""The library page (listing, filters, live search), live status, records."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from apps.core.errors import JarvisError
from apps.library.index.embeddings import EmbeddingUnavailable
from apps.library.search import Filters, query_terms, search
from apps.library.selectors import (
    KIND_GROUPS,
    ListingFilters,
    collection_owners,
    facet_values,
    in_flight,
    library_documents,
    record_categories,
    sources_visible_to,
)
from apps.library.versions.timemode import MODE_WORDS
from apps.library.worker_queue import queue_places

PAGE_SIZE = 50
SEARCH_LIMIT = 20


def _search_filters(listing: ListingFilters) -> Filters:
    return Filters(
        source_ids=[listing.source] if listing.source else None,
        kinds=list(KIND_GROUPS.get(listing.kind, [listing.kind])) if listing.kind else None,
        category=listing.category,
        status=listing.status,
        entity=listing.entity,
        tags=[listing.tag] if listing.tag else [],
    )


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    filters = ListingFilters.from_query(request.GET)
    query = request.GET.get("q", "").strip()[:2000]
    context = {
        "filters": filters,
        "query": query,
        "collections": sources_visible_to(request.user).order_by("name"),
        "categories": record_categories(request.user),
        "busy": list(in_flight(request.user)[:20]),
        "column_set": filters.kind if filters.kind in KIND_GROUPS else "all",
    }
    if query:
        try:
            response = search(
                user=request.user, query=query, mode=request.GET.get("mode", "auto"),
                limit=SEARCH_LIMIT, filters=_search_filters(filters),
                latest_only=filters.latest,
            )  # fmt: skip
            # Only passages past the relevance floor: nearest neighbours of
            # `qwxzv` are not matches (apps.library.search.relevance).
            results = response.relevant
            owners = collection_owners(request.user, {r.source_id for r in results})
            for r in results:
                # Shown beside the collection's name: someone else's "Demo vault" names its owner.
                r.owner = owners.get(r.source_id, "")
            context.update(
                results=results,
                mode_words=MODE_WORDS.get(response.mode, response.mode),
                terms=query_terms(query),
            )
        except (JarvisError, EmbeddingUnavailable, ValueError) as exc:
            context["search_error"] = str(exc)
    else:
        page = Paginator(library_documents(request.user, filters), PAGE_SIZE).get_page(
            request.GET.get("page")
        )
        # Every waiting row's place in the queue from one reading of it.
        places = queue_places(request.user, page.object_list)
        for document in page.object_list:
            document.queue_place = places.get(document.pk)
        context["page"] = page
    template = "library/index.html#results" if request.htmx else "library/index.html"
    return render(request, template, context)


@login_required
@require_GET
def status(request: HttpRequest) -> HttpResponse:
    """What is still being added; polled while anything is in flight."""
    busy = list(in_flight(request.user)[:20])
    response = render(request, "library/_status.html", {"busy": busy})
    if not busy and request.GET.get("was") == "busy":
        response["HX-Trigger"] = "library-changed"  # refresh the listing once
    return response


@login_required
@require_GET
def records(request: HttpRequest) -> HttpResponse:
    categories = record_categories(request.user)
    filters = ListingFilters.from_query(request.GET)
    if not filters.category and categories:
        filters.category = categories[0][0]
    documents = library_documents(request.user, filters) if filters.category else []
    page = Paginator(documents, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "categories": categories,
        "filters": filters,
        "page": page,
        "statuses": facet_values(request.user, "record_status", category=filters.category),
        "entities": facet_values(request.user, "entity", category=filters.category),
    }
    template = "library/records.html#table" if request.htmx else "library/records.html"
    return render(request, template, context)
