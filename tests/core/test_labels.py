"""Labels people read: sizes, record fields and annotation markers."""

from __future__ import annotations

from datetime import timedelta

from django.template import Context, Template
from django.utils import timezone

from apps.core.templatetags.jarvis import field_label, filesize


def render(source: str, **context) -> str:
    return Template("{% load jarvis %}" + source).render(Context(context))


def test_one_byte_is_singular():
    assert filesize(1) == "1 byte"
    assert filesize(2) == "2 bytes"
    assert filesize(2048) == "2.0 KB"


def test_record_fields_are_shown_by_their_names():
    assert field_label("x_salary_band") == "salary band"
    assert field_label("x_name") == "name"
    assert field_label("status") == "status"


def test_an_annotation_marker_is_a_badge_not_text():
    html = render(
        "{{ t|highlight:terms }}", t="[HIGHLIGHT p.2] the valve <b>leaks</b>", terms=["valve"]
    )
    assert "[HIGHLIGHT" not in html
    assert '<span class="badge" data-testid="annotation-badge">highlight · p. 2</span>' in html
    assert "the <mark>valve</mark> &lt;b&gt;leaks&lt;/b&gt;" in html


def test_text_without_a_marker_is_unchanged():
    assert render("{{ t|highlight:terms }}", t="[x] a <i>", terms=[]) == "[x] a &lt;i&gt;"


def test_pages_for_people_name_no_commands_or_doc_files(client, owner, settings):
    pages = [client.get("/accounts/login/").content.decode()]
    client.force_login(owner)
    pages.append(client.get("/settings/mcp/").content.decode())
    pages.append(client.get("/projects/").content.decode())
    pages.append(Template("{% include '403.html' %}").render(Context({})))
    for html in pages:
        assert "manage.py" not in html.replace("manage.py mcp", "")  # an app's own launch line
        assert "docs/" not in html
    assert "Ask an admin of this Jarvis" in pages[0]


def test_a_moment_ago_is_just_now_not_zero_minutes():
    now = timezone.now()
    assert render("{{ t|ago }}", t=now - timedelta(seconds=20)) == "just now"
    assert render("{{ t|ago }}", t=now - timedelta(minutes=5, seconds=3)) == "5\xa0minutes ago"
