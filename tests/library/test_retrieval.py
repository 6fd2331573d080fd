"""Retrieval that keeps the promise (issue 10): titles, headings, file names and
records are searchable; the newest version a person may see comes first;
moved notes stay one family; everyday words reach records; bad input is inert."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from apps.chats.tools.context import TurnContext
from apps.chats.tools.library import search_notes
from apps.library.index import fts
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from apps.library.search import search
from apps.library.search.records import STATUS_GROUPS, RecordValues, match_question

DAY = 86_400
T0 = 1_780_000_000  # 2026-05-28


def synced(owner, vault, make_source, embedder, **options):
    source = make_source(owner, vault, **options)
    source_sync(source=source, embedder=embedder)
    return source


def doc(source: Source, path: str) -> Document:
    return Document.objects.get(source=source, path=path)


# --- the keyword columns ------------------------------------------------------------------

BOILER_MARCH = """# Boiler service — March 2026

Engineer: Tomasz from WarmHome.

- Annual service done on 14 March 2026.
- Next service due: March 2027.
"""
BOILER_OCTOBER = """# Boiler service — October 2026

Engineer: Priya from HeatRight. WarmHome no longer covers our street.

- Emergency call-out on 3 October 2026: the diverter valve failed.
- Next service due: October 2027.
"""


@pytest.fixture
def boiler(owner, vault, make_source, embedder):
    vault.write("home/boiler_service_2026-03.md", BOILER_MARCH)
    vault.write("home/boiler_service_2026-10.md", BOILER_OCTOBER)
    vault.write("home/kitchen.md", "# Kitchen\n\nThe extractor fan rattles.\n")
    return synced(owner, vault, make_source, embedder)


def test_a_keyword_row_holds_title_headings_path_words_record_and_text(owner, vault, make_source):
    from tests.support.fixtures import CountingEmbedder

    vault.write(
        "jobs/acme_application_2026-05.md",
        "---\ncategory: job_application\nstatus: rejected\nentity: Acme\ntags: [remote]\n---\n"
        "# Acme backend role\n\n## Interview\n\nThey went with someone else.\n",
    )
    source = synced(owner, vault, make_source, CountingEmbedder())
    chunk = doc(source, "jobs/acme_application_2026-05.md").chunks.get()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT title, headings, path, record, text FROM {fts.FTS_TABLE} WHERE rowid = %s",
            [chunk.pk],
        )
        title, headings, path, record, text = cursor.fetchone()
    assert title == "Acme backend role"
    assert "Interview" in headings
    assert path == "jobs acme application"  # date stripped, separators become spaces
    assert record.splitlines() == [
        "category: job_application",
        "status: rejected",
        "entity: Acme",
        "tags: remote",
    ]
    assert text == "They went with someone else."


def test_a_word_only_in_the_title_finds_the_latest_version_first(owner, boiler, embedder):
    results = search(user=owner, query="boiler", embedder=embedder).results
    assert results[0].path == "home/boiler_service_2026-10.md"
    assert results[0].is_latest
    march = [r for r in results if r.path == "home/boiler_service_2026-03.md"]
    assert all(not r.is_latest for r in march)


def test_a_word_only_in_the_file_name_is_found(owner, vault, make_source, embedder):
    vault.write("insurance/harbour_mutual_renewal.md", "# Renewal\n\nPaid £312 by direct debit.\n")
    vault.write("notes/misc.md", "# Misc\n\nNothing much.\n")
    synced(owner, vault, make_source, embedder)
    top = search(user=owner, query="harbour mutual", embedder=embedder).results[0]
    assert top.path == "insurance/harbour_mutual_renewal.md"
    assert "keyword" in top.legs


def test_a_heading_match_outranks_a_body_mention(owner, vault, make_source, embedder):
    vault.write("a.md", "# Garden\n\n## Compost\n\nTurn it every two weeks.\n")
    vault.write("b.md", "# Shed\n\nThe shed is next to the compost heap and the bikes.\n")
    synced(owner, vault, make_source, embedder)
    results = search(user=owner, query="compost", mode="lookup", embedder=embedder).results
    assert results[0].path == "a.md"


def test_reindex_fts_rebuilds_the_keyword_rows_without_embedding(owner, boiler, embedder):
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {fts.FTS_TABLE}")
    assert not [
        r
        for r in search(user=owner, query="boiler", embedder=embedder).results
        if "keyword" in r.legs
    ]
    out = StringIO()
    before = embedder.passages
    call_command("reindex", "--fts", stdout=out)
    assert "rebuilt the keyword index" in out.getvalue()
    assert embedder.passages == before  # nothing re-embedded
    top = search(user=owner, query="boiler", embedder=embedder).results[0]
    assert top.path == "home/boiler_service_2026-10.md" and "keyword" in top.legs


@pytest.mark.parametrize(
    "name",
    ['we "quote" NEAR(x', "a*b OR c", "title: -minus (((", "AND", "x:y^z"],
)
def test_fts_syntax_in_titles_and_file_names_never_breaks_a_query(
    owner, vault, make_source, embedder, name
):
    safe = "".join(ch if ch not in '/:*"' else "_" for ch in name)
    vault.write(f"{safe}.md", f"# {name}\n\nThe seed order for spring.\n")
    synced(owner, vault, make_source, embedder)
    for query in (name, f"{name} seed order", "seed order"):
        response = search(user=owner, query=query, embedder=embedder)
        assert response.mode in {"lookup", "present", "history"}
    assert search(user=owner, query="seed order spring", embedder=embedder).results


# --- family expansion and latest only -----------------------------------------------------


def test_latest_only_drops_older_versions_in_search_cli_and_library(
    owner, boiler, embedder, client
):
    response = search(
        user=owner, query="boiler Tomasz WarmHome", latest_only=True, embedder=embedder
    )
    assert response.results and all(r.is_latest for r in response.results)
    assert not any(r.path.endswith("2026-03.md") for r in response.results)
    out = StringIO()
    call_command(
        "kb", "search", "--user", owner.username, "--latest-only", "boiler Tomasz", stdout=out
    )
    assert "2026-03" not in out.getvalue() and "boiler_service_2026-10.md" in out.getvalue()
    client.force_login(owner)
    page = client.get("/library/?q=boiler+Tomasz&latest=1").content.decode()
    assert "boiler_service_2026-10.md" in page and "boiler_service_2026-03.md" not in page
    everything = client.get("/library/?q=boiler+Tomasz").content.decode()
    assert everything.index("boiler_service_2026-10.md") < everything.index(
        "boiler_service_2026-03.md"
    )


def test_history_mode_still_lists_every_version_in_date_order(owner, boiler, embedder):
    results = search(user=owner, query="boiler", mode="history", embedder=embedder).results
    paths = [r.path for r in results if r.path.startswith("home/boiler")]
    assert paths == ["home/boiler_service_2026-03.md", "home/boiler_service_2026-10.md"]


def test_a_latest_version_in_a_private_folder_is_never_pulled_in_for_others(
    owner, member, vault, make_source, embedder
):
    vault.write(
        "money/salary_expectations.md",
        "# Salary expectations\n\nLowest I would take: £52,000 with hybrid working.\n",
        mtime=T0,
    )
    vault.write(
        "private/salary_expectations.md",
        "# Salary expectations\n\nLowest I would take: £47,000 with hybrid working, if remote.\n",
        mtime=T0 + 30 * DAY,
    )
    source = synced(owner, vault, make_source, embedder, sharing=Source.Sharing.HOUSEHOLD)
    old, new = (
        doc(source, "money/salary_expectations.md"),
        doc(source, "private/salary_expectations.md"),
    )
    assert old.family == new.family and new.is_latest and not old.is_latest

    mine = search(user=owner, query="lowest salary I would take", embedder=embedder).results
    assert mine[0].path == "private/salary_expectations.md"

    theirs = search(user=member, query="lowest salary I would take", embedder=embedder).results
    assert [r.path for r in theirs] == ["money/salary_expectations.md"]
    # For them the old one is the newest version there is: nothing points past it.
    assert theirs[0].is_latest and theirs[0].superseded_by == ""
    assert "47,000" not in " ".join(r.text for r in theirs)


def test_a_family_whose_latest_failed_falls_back_to_the_newest_parsed_and_says_so(
    owner, vault, make_source, embedder
):
    vault.write(
        "plans/lisbon_plan_v1.md", "# Lisbon trip plan\n\nFlights with TAP from Manchester.\n"
    )
    vault.write_bytes("plans/lisbon_plan_v2.md", b"\xff\xfe\x00broken \x00\x00 bytes" * 50)
    source = synced(owner, vault, make_source, embedder)
    failed = doc(source, "plans/lisbon_plan_v2.md")
    assert failed.status == Document.Status.FAILED
    v1 = doc(source, "plans/lisbon_plan_v1.md")
    assert v1.is_latest and v1.family == failed.family
    top = search(user=owner, query="Lisbon flights", embedder=embedder).results[0]
    assert top.path == "plans/lisbon_plan_v1.md" and top.is_latest
    assert "plans/lisbon_plan_v2.md" in top.note and "could not be read" in top.note
    # The chat's search tool passes the note on to the model.
    ctx = TurnContext(user=owner, chat=None, cloud=False, notes_only=True)
    assert "plans/lisbon_plan_v2.md, could not be read" in search_notes(ctx, {"query": "Lisbon"})


# --- moved and renamed notes --------------------------------------------------------------

WIFI_OLD = """# Wifi and broadband

Provider: Tangerine, contract ends June 2026. The router lives in the hall
cupboard; the password is on the sticker underneath. Restart it by holding the
reset button for ten seconds. Guest network: off.
"""
WIFI_NEW = """# Wifi and broadband

## Checked October 2026

Provider: Lumen Fibre, contract ends July 2028. The router moved to the study
shelf; the password is on the sticker underneath. Restart it by holding the
reset button for ten seconds. Guest network: on, for visitors.
"""


def test_a_note_moved_into_a_subfolder_and_updated_is_its_later_version(
    owner, vault, make_source, embedder, client
):
    vault.write("household/wifi_and_broadband.md", WIFI_OLD, mtime=T0)
    vault.write("household/home/tech/wifi_and_broadband.md", WIFI_NEW, mtime=T0 + 100 * DAY)
    source = synced(owner, vault, make_source, embedder)
    old = doc(source, "household/wifi_and_broadband.md")
    new = doc(source, "household/home/tech/wifi_and_broadband.md")
    assert old.family == new.family
    assert new.is_latest and not old.is_latest
    top = search(user=owner, query="where is the wifi router", embedder=embedder).results[0]
    assert top.path == "household/home/tech/wifi_and_broadband.md"

    client.force_login(owner)
    page = client.get(f"/library/doc/{new.pk}/").content.decode()
    assert f"moved from {source.name}/household/ to {source.name}/household/home/tech/" in page


def test_unrelated_notes_with_the_same_name_in_two_folders_stay_apart(
    owner, vault, make_source, embedder
):
    vault.write(
        "work/budget.md", "# Budget\n\nServer costs, licences and the team offsite.\n", mtime=T0
    )
    vault.write(
        "home/budget.md",
        "# Budget\n\nGroceries, council tax and the car insurance.\n",
        mtime=T0 + DAY,
    )
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "work/budget.md").family != doc(source, "home/budget.md").family


# --- everyday words reach records ---------------------------------------------------------

RECORDS = {
    "jobs/northgate.md": (
        "job_application",
        "rejected",
        "Northgate Logistics",
        "They went with someone else.",
    ),
    "jobs/kestrel.md": (
        "job_application",
        "offer",
        "Kestrel Labs",
        "Salary £54k, start in January.",
    ),
    "jobs/fenwick.md": (
        "job_application",
        "applied",
        "Fenwick Council",
        "Sent the form on 27 October.",
    ),
    "jobs/tallow.md": (
        "job_application",
        "withdrawn",
        "Tallow & Finch",
        "Stepping out of the process.",
    ),
    "projects/studio.md": ("project", "on hold", "", "Paused until the electrician is back."),
    "projects/bathroom.md": ("project", "done", "", "Tiles grouted, fan fitted."),
}


@pytest.fixture
def records(owner, vault, make_source, embedder):
    for path, (category, status, entity, body) in RECORDS.items():
        front = f"category: {category}\nstatus: {status}\n" + (
            f"entity: {entity}\n" if entity else ""
        )
        title = path.split("/")[1].removesuffix(".md").title()
        vault.write(path, f"---\n{front}---\n# {title}\n\n{body}\n")
    vault.write("notes/walks.md", "# Walks\n\nThe river path is muddy after rain.\n")
    return synced(owner, vault, make_source, embedder)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which jobs turned me down?", "jobs/northgate.md"),
        ("Who said no to me?", "jobs/northgate.md"),
        ("Has anyone made me an offer?", "jobs/kestrel.md"),
        ("What's still waiting for an answer?", "jobs/fenwick.md"),
        ("Which application did I pull out of?", "jobs/tallow.md"),
        ("Which of my projects got put on hold?", "projects/studio.md"),
        ("Is the bathroom finished?", "projects/bathroom.md"),
    ],
)
def test_everyday_status_words_find_the_records_carrying_that_status(
    owner, records, embedder, question, expected
):
    results = search(user=owner, query=question, limit=3, embedder=embedder).results
    assert results[0].path == expected
    assert "record" in results[0].legs


def test_a_status_nobody_has_boosts_nothing(owner, vault, make_source, embedder):
    vault.write("a.md", "# Walks\n\nThe river path is muddy after rain.\n")
    synced(owner, vault, make_source, embedder)
    results = search(user=owner, query="which jobs turned me down", embedder=embedder).results
    assert all("record" not in r.legs for r in results)


def test_the_status_table_maps_everyday_phrases_to_statuses():
    values = RecordValues(
        categories={"job_application", "project"},
        statuses={"rejected", "done", "on hold", "applied", "withdrawn", "offer"},
        entities={"kestrel labs"},
    )
    assert match_question("they turned me down", values).statuses == {"rejected"}
    assert match_question("is it completed yet", values).statuses == {"done"}
    assert match_question("what's holding it up", values).statuses == {"on hold"}
    assert match_question("haven't heard back from", values).statuses == {"applied"}
    assert match_question("did I back out of one", values).statuses == {"withdrawn"}
    assert match_question("any jobs with offers", values).categories == {"job_application"}
    assert match_question("what did Kestrel say", values).entities == {"kestrel labs"}
    assert not match_question("where is the river path", values)
    assert {g.name for g in STATUS_GROUPS} >= {"done", "on hold", "rejected", "pending", "accepted"}


def test_records_another_person_cannot_see_boost_nothing(owner, member, records, embedder):
    results = search(user=member, query="Which jobs turned me down?", embedder=embedder).results
    assert results == []  # the owner's vault is not shared


def test_the_library_listing_calls_the_newest_visible_copy_latest(
    owner, member, vault, make_source, embedder, client
):
    vault.write(
        "money/salary_expectations.md",
        "# Salary expectations\n\nLowest I would take: £52,000 with hybrid working.\n",
        mtime=T0,
    )
    vault.write(
        "private/salary_expectations.md",
        "# Salary expectations\n\nLowest I would take: £47,000 with hybrid working, if remote.\n",
        mtime=T0 + 30 * DAY,
    )
    synced(owner, vault, make_source, embedder, sharing=Source.Sharing.HOUSEHOLD)
    client.force_login(member)
    listing = client.get("/library/?kind=notes").content.decode()
    assert "money/salary_expectations.md" in listing and "private/" not in listing
    # Nothing hints at a version they cannot see.
    assert "badge--warn" not in listing and ">latest<" in listing
    latest_only = client.get("/library/?kind=notes&latest=1").content.decode()
    assert "money/salary_expectations.md" in latest_only
    client.force_login(owner)
    mine = client.get("/library/?kind=notes&latest=1").content.decode()
    assert "private/salary_expectations.md" in mine
    assert "money/salary_expectations.md" not in mine


def test_where_a_project_stands_ranks_its_latest_note_first(owner, vault, make_source, embedder):
    vault.write(
        "projects/garden_studio_2026-04.md",
        "---\ntype: project\nstatus: planning\n---\n# Garden studio\n\n"
        "Planning the garden studio: quotes from two builders, base in May.\n",
    )
    vault.write(
        "projects/garden_studio_2026-07.md",
        "---\ntype: project\nstatus: in progress\n---\n# Garden studio\n\n"
        "The garden studio base is poured; electrics booked for September.\n",
    )
    vault.write(
        "projects/garden_studio_2026-10.md",
        "---\ntype: project\nstatus: on hold\n---\n# Garden studio\n\n"
        "Paused: the electrician broke his wrist. Ready by Easter at the earliest.\n",
    )
    synced(owner, vault, make_source, embedder)
    for question in ("Where are we with the garden studio?", "What's holding up the studio?"):
        results = search(user=owner, query=question, embedder=embedder).results
        assert results[0].path == "projects/garden_studio_2026-10.md", question
        older = [r.path for r in results if not r.is_latest]
        assert all(p != "projects/garden_studio_2026-10.md" for p in older)


def test_the_chat_search_tool_takes_latest_only(owner, boiler, embedder):
    ctx = TurnContext(user=owner, chat=None, cloud=False, notes_only=True)
    everything = search_notes(ctx, {"query": "boiler engineer Tomasz WarmHome"})
    assert "boiler_service_2026-10.md" in everything
    assert everything.index("boiler_service_2026-10.md") < everything.index(
        "boiler_service_2026-03.md"
    )
    assert "SUPERSEDED by home/boiler_service_2026-10.md" in everything
    ctx = TurnContext(user=owner, chat=None, cloud=False, notes_only=True)
    latest = search_notes(ctx, {"query": "boiler engineer Tomasz WarmHome", "latest_only": True})
    assert "boiler_service_2026-03.md" not in latest


def test_the_keyword_leg_finds_visible_matches_behind_many_invisible_ones(
    owner, member, vault, make_vault, make_source, embedder, monkeypatch
):
    from apps.library.search import legs
    from apps.library.search.query import Filters
    from apps.library.selectors import visible_pools

    theirs = make_vault("marta")
    for n in range(6):
        theirs.write(f"n{n}.md", f"# Quince {n}\n\nQuince quince quince jelly, batch {n}.\n")
    make_source(member, theirs, name="marta vault")  # not shared
    source_sync(source=Source.objects.get(name="marta vault"), embedder=embedder)
    vault.write("mine.md", "# Pantry\n\nOne jar of quince jelly left.\n")
    synced(owner, vault, make_source, embedder)
    monkeypatch.setattr(legs, "KEYWORD_PREFILTER", 2)  # the best two matches are all theirs
    ids = legs.keyword_leg("quince", visible_pools(owner), Filters(), False)
    assert [Document.objects.get(chunks__id=i).path for i in ids] == ["mine.md"]


# --- a dated rewrite: the newer version's same section ---------------------------------------

HANDOFF = """# Okafor household handoff
## {month} 2026

### Who we are
Ngozi and Tunde Okafor and the twins, in Leeds since 2019. Ngozi handles the
bills, Tunde the car and the garden.

### Internet
{internet}

### Bins
{bins}
"""


@pytest.fixture
def handoffs(owner, vault, make_source, embedder):
    vault.write(
        "household/handoff_2026-03.md",
        HANDOFF.format(
            month="March",
            internet="Broadband from Virgin Media, 350 Mb; the router is in the hallway.",
            bins="Green bin on Tuesdays, recycling every other Friday.",
        ),
    )
    vault.write(
        "household/handoff_2026-10.md",
        HANDOFF.format(
            month="October",
            internet="Zen fibre since July, 900 Mb; the new router lives in the study.",
            bins="Green bin on Wednesdays now, recycling every other Monday.",
        ),
    )
    return synced(owner, vault, make_source, embedder)


def test_an_older_section_brings_in_the_same_section_of_the_newer_version(
    owner, handoffs, embedder
):
    # "broadband" is a word only the March "Internet" section has: the newer
    # version stands in with its own "Internet" section, not with whichever
    # of its sections is closest to a question that names the Okafors.
    question = "What broadband do Ngozi and Tunde Okafor have?"
    results = search(user=owner, query=question, embedder=embedder).results
    newest = [r for r in results if r.path == "household/handoff_2026-10.md"]
    assert newest and newest[0].section.endswith("Internet")
    march = [i for i, r in enumerate(results) if r.path == "household/handoff_2026-03.md"]
    assert all(results.index(newest[0]) < i for i in march)


def test_the_current_version_shows_two_passages_like_any_note(owner, handoffs, embedder):
    results = search(
        user=owner, query="router and green bin day", embedder=embedder, limit=5
    ).results
    newest = {r.section.rsplit("›", 1)[-1].strip() for r in results if r.is_latest}
    assert {"Internet", "Bins"} <= newest


def test_a_search_with_nothing_visible_embeds_nothing(member, embedder):
    # An embedding begun for a search that then returns early ran on after
    # it, on a thread nobody waited for (a fresh process's model load).
    assert search(user=member, query="boiler", embedder=embedder).results == []
    assert embedder.queries == 0
