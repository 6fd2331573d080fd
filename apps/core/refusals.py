"""How a view refuses an htmx request so that the page shows why.

Every 4xx/5xx answer to an htmx request reaches one handler in
static/js/app.js. By default it shows the reason next to the control that
sent the request (or where that control's `data-refusal-target` says, or as a
toast): the body is `_error.html`, one short sentence. A refusal whose body is
instead a partial for the request's own target (the Add page's result row, an
approval card saying why) carries `SWAP_HEADER` and is swapped in as a success
would be.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.template.loader import render_to_string

SWAP_HEADER = "Jarvis-Refusal"


def refusal_html(message: str) -> str:
    return render_to_string("_error.html", {"message": message})


def refusal_response(message: str, *, status: int = 400) -> HttpResponse:
    """The reason alone, for the handler to place by the control that asked."""
    return HttpResponse(refusal_html(message), status=status)


def refusal_swapped(response: HttpResponse) -> HttpResponse:
    """Mark a refusal whose body is meant for the request's target."""
    response[SWAP_HEADER] = "swap"
    return response
