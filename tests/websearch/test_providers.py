"""The provider clients against the fake provider over real HTTP: SearXNG's
JSON API and Brave Search's API give one shape of result; failures say what
went wrong without the key; a provider that hangs is cut off at its limit.
And the admin form that configures them keeps the key encrypted."""

from __future__ import annotations

import pytest

from apps.websearch.models import SearchProvider
from apps.websearch.providers import (
    ProviderError,
    ProviderTimeout,
    WebResult,
    provider_search,
)
from tests.websearch.conftest import signed_in

pytestmark = pytest.mark.django_db


def searxng(web, **fields) -> SearchProvider:
    return SearchProvider.objects.create(
        name="searx", kind="searxng", base_url=web.base_url, **fields
    )


def brave(web, key: str, **fields) -> SearchProvider:
    provider = SearchProvider(
        name="brave", kind="brave", base_url=web.url("/res/v1/web/search"), **fields
    )
    provider.set_api_key(key)
    provider.save()
    return provider


def test_searxng_results_come_back_in_one_shape(web):
    web.result("Bin collections change", "/pages/bins", "Holiday &amp; changes")
    web.result("Second", "https://example.org/two", "more")
    results = provider_search(searxng(web), "bin day")
    assert results == [
        WebResult("Bin collections change", web.url("/pages/bins"), "Holiday & changes"),
        WebResult("Second", "https://example.org/two", "more"),
    ]
    assert web.queries == ["bin day"]
    assert "format=json" in web.requests[-1].path


def test_only_web_addresses_are_kept_and_at_most_max_results(web):
    web.result("Script", "javascript:alert(1)", "x")
    web.result("File", "file:///etc/passwd", "x")
    for n in range(8):
        web.result(f"Page {n}", f"https://example.org/{n}", "")
    results = provider_search(searxng(web, max_results=3), "anything")
    assert [r.url for r in results] == [f"https://example.org/{n}" for n in range(3)]


def test_a_searxng_without_the_json_format_says_how_to_turn_it_on(web):
    web.json_enabled = False
    with pytest.raises(ProviderError, match="list json under search: formats"):
        provider_search(searxng(web), "bin day")


def test_a_provider_that_hangs_is_cut_off_at_its_limit(web):
    web.search_delay = 10
    with pytest.raises(ProviderTimeout, match="did not answer within 1 s"):
        provider_search(searxng(web, timeout_seconds=1), "bin day")


def test_a_provider_that_cannot_be_reached_says_so(web):
    provider = SearchProvider.objects.create(
        name="gone", kind="searxng", base_url="http://127.0.0.1:9"
    )
    with pytest.raises(ProviderError, match="could not be reached"):
        provider_search(provider, "bin day")


def test_brave_sends_the_key_in_its_header_and_strips_its_markup(web):
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    results = provider_search(brave(web, web.brave_key, max_results=4), "bin day")
    assert results == [
        WebResult("Bin collections change", web.url("/pages/bins"), "Holiday changes")
    ]
    seen = web.requests[-1]
    assert seen.headers["x-subscription-token"] == web.brave_key
    assert web.brave_key not in seen.path and "count=4" in seen.path


def test_a_refused_brave_key_is_reported_without_the_key(web):
    with pytest.raises(ProviderError) as caught:
        provider_search(brave(web, "wrong-key-987654321"), "bin day")
    assert "refused the API key (HTTP 401)" in str(caught.value)
    assert "wrong-key" not in str(caught.value)


def test_brave_without_a_key_asks_for_one(web):
    provider = SearchProvider.objects.create(name="brave", kind="brave")
    with pytest.raises(ProviderError, match="no API key"):
        provider_search(provider, "bin day")


def test_the_key_is_stored_encrypted(web):
    provider = brave(web, "BSA-the-real-key-123456")
    stored = SearchProvider.objects.values_list("api_key_encrypted", flat=True).get()
    assert "BSA-the-real-key" not in stored
    assert SearchProvider.objects.get().api_key == "BSA-the-real-key-123456"
    assert provider.masked_key == "BSA…3456"


def test_the_admin_form_keeps_the_key_encrypted_and_never_shows_it(admin):
    client = signed_in(admin)
    response = client.post(
        "/admin/websearch/searchprovider/add/",
        {
            "name": "Brave",
            "kind": "brave",
            "base_url": "",
            "location": "",
            "enabled": "on",
            "timeout_seconds": "8",
            "max_results": "5",
            "pages_to_read": "3",
            "max_page_kb": "1024",
            "api_key": "BSA-admin-typed-key-42424242",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    provider = SearchProvider.objects.get()
    assert provider.api_key == "BSA-admin-typed-key-42424242"
    assert provider.location == "cloud" and provider.url.startswith("https://api.search.brave")
    page = client.get(f"/admin/websearch/searchprovider/{provider.pk}/change/").content.decode()
    assert "BSA-admin-typed-key-42424242" not in page and "BSA…4242" in page
    listing = client.get("/admin/websearch/searchprovider/").content.decode()
    assert "BSA-admin-typed-key" not in listing


def test_the_admin_form_asks_for_what_each_kind_needs(admin):
    client = signed_in(admin)
    base = {
        "name": "x",
        "location": "",
        "enabled": "on",
        "timeout_seconds": "8",
        "max_results": "5",
        "pages_to_read": "3",
        "max_page_kb": "1024",
    }
    no_key = client.post("/admin/websearch/searchprovider/add/", {**base, "kind": "brave"})
    assert "Brave Search needs an API key." in no_key.content.decode()
    no_url = client.post("/admin/websearch/searchprovider/add/", {**base, "kind": "searxng"})
    assert "Enter your SearXNG instance" in no_url.content.decode()
    assert not SearchProvider.objects.exists()
    client.post(
        "/admin/websearch/searchprovider/add/",
        {**base, "kind": "searxng", "base_url": "http://searx.lan:8080/"},
    )
    provider = SearchProvider.objects.get()
    assert provider.location == "local" and provider.base_url == "http://searx.lan:8080"


def test_the_key_appears_in_no_log_line(web, caplog):
    caplog.set_level("DEBUG")
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    provider_search(brave(web, web.brave_key), "bin day")
    with pytest.raises(ProviderError):
        provider_search(brave_gone := brave_at(web, "http://127.0.0.1:9/x"), "bin day")
    assert brave_gone.api_key == web.brave_key
    assert caplog.records and web.brave_key not in caplog.text


def brave_at(web, url: str) -> SearchProvider:
    provider = SearchProvider(name="brave elsewhere", kind="brave", base_url=url)
    provider.set_api_key(web.brave_key)
    provider.save()
    return provider
