"""Markdown notes → heading-aware chunks: breadcrumbs, packing, code fences,
Obsidian syntax, inline tags, frontmatter records and dated headings.

Pure functions: no database, no embedding."""

from __future__ import annotations

import re
from datetime import date
from itertools import pairwise

from apps.library.ingest.parsing.chunking import MAX_CHARS, OVERLAP_CHARS
from apps.library.ingest.parsing.markdown import parse_markdown

# A chunk may be MAX_CHARS of its own text plus the overlap it repeats from
# the chunk before ("… " + tail + blank line).
CHUNK_CEILING = MAX_CHARS + OVERLAP_CHARS + len("… \n\n")


def parse(text: str, fallback_title: str = "fallback"):
    return parse_markdown(text, fallback_title=fallback_title)


def by_section(parsed) -> dict[str, str]:
    joined: dict[str, str] = {}
    for chunk in parsed.chunks:
        joined[chunk.section] = (joined.get(chunk.section, "") + "\n" + chunk.text).strip()
    return joined


def all_text(parsed) -> str:
    return "\n".join(chunk.text for chunk in parsed.chunks)


# --- headings and breadcrumbs -------------------------------------------------


def test_headings_split_a_note_into_sections_with_breadcrumbs():
    parsed = parse(
        "# Project Statuses\n\n"
        "Overview of everything running.\n\n"
        "## PixelNet\n\nTraining the segmentation model.\n\n"
        "### Blockers\n\nWaiting for GPU quota.\n\n"
        "## Garden\n\nTomatoes planted.\n"
    )
    sections = by_section(parsed)
    assert parsed.title == "Project Statuses"
    assert set(sections) == {"", "PixelNet", "PixelNet › Blockers", "Garden"}
    assert sections[""] == "Overview of everything running."
    assert sections["PixelNet"] == "Training the segmentation model."
    assert sections["PixelNet › Blockers"] == "Waiting for GPU quota."
    assert sections["Garden"] == "Tomatoes planted."


def test_the_title_heading_is_the_title_and_never_a_breadcrumb_part():
    parsed = parse("# Reading list\n\n## Novels\n\nMiddlemarch.\n")
    assert parsed.title == "Reading list"
    assert [c.section for c in parsed.chunks] == ["Novels"]
    assert not any("Reading list" in c.section for c in parsed.chunks)


def test_a_note_without_a_title_heading_takes_the_fallback_title():
    parsed = parse("Just a line of text.\n", fallback_title="career plan")
    assert parsed.title == "career plan"
    assert parsed.chunks[0].text == "Just a line of text."


def test_a_heading_pops_back_to_its_own_level_in_the_breadcrumb():
    parsed = parse(
        "# T\n\n## A\n\n### B\n\n#### C\n\nDeep.\n\n### D\n\nSibling of B.\n\n## E\n\nTop again.\n"
    )
    sections = by_section(parsed)
    assert sections["A › B › C"] == "Deep."
    assert sections["A › D"] == "Sibling of B."
    assert sections["E"] == "Top again."


# --- packing long sections ------------------------------------------------------


def _long_section(sentences: int) -> tuple[str, list[str]]:
    words = ["apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron"]
    said = [
        f"Sentence {i} says the {words[i % len(words)]} report number {i * 7} was filed on time."
        for i in range(sentences)
    ]
    # Paragraphs of four sentences, so packing has block boundaries to use.
    paragraphs = [" ".join(said[i : i + 4]) for i in range(0, len(said), 4)]
    return "\n\n".join(paragraphs), said


def test_a_long_section_is_packed_into_several_bounded_chunks_that_keep_every_sentence():
    body, sentences = _long_section(80)
    parsed = parse(f"# Reports\n\n## Filing\n\n{body}\n")
    chunks = parsed.chunks
    assert len(chunks) >= 3
    assert all(c.section == "Filing" for c in chunks)
    assert all(len(c.text) <= CHUNK_CEILING for c in chunks), [len(c.text) for c in chunks]
    for sentence in sentences:
        assert any(sentence in c.text for c in chunks), sentence


def test_one_huge_paragraph_is_cut_at_sentence_ends_without_losing_a_sentence():
    _, sentences = _long_section(60)
    parsed = parse("# Reports\n\n" + " ".join(sentences) + "\n")
    chunks = parsed.chunks
    assert len(chunks) >= 3
    assert all(len(c.text) <= CHUNK_CEILING for c in chunks), [len(c.text) for c in chunks]
    for sentence in sentences:
        assert any(sentence in c.text for c in chunks), sentence


def test_consecutive_chunks_of_a_section_overlap_slightly():
    body, _ = _long_section(80)
    chunks = parse(f"# Reports\n\n{body}\n").chunks
    assert len(chunks) >= 3
    for before, after in pairwise(chunks):
        assert after.text.startswith("… ")
        repeated = after.text[2:].split("\n\n", 1)[0]
        assert repeated, "the next chunk repeats nothing of the one before"
        assert before.text.endswith(repeated)
        assert len(repeated) <= OVERLAP_CHARS


def test_chunks_do_not_overlap_across_sections():
    body, _ = _long_section(40)
    parsed = parse(f"# R\n\n## One\n\n{body}\n\n## Two\n\nShort second section.\n")
    second = [c for c in parsed.chunks if c.section == "Two"]
    assert [c.text for c in second] == ["Short second section."]


# --- code fences ------------------------------------------------------------------


def test_a_code_fence_is_kept_whole_in_one_chunk():
    prose, _ = _long_section(20)
    code_lines = [f"    result_{i} = compute(value_{i}, factor={i})" for i in range(20)]
    code = "```python\ndef build():\n" + "\n\n".join(code_lines) + "\n```"
    parsed = parse(f"# Build\n\n{prose}\n\n{code}\n\nAfter the code.\n")
    holding = [c for c in parsed.chunks if "def build():" in c.text]
    assert len(holding) == 1
    assert code in holding[0].text


def test_a_heading_inside_a_code_fence_is_not_a_heading():
    parsed = parse(
        "# Shell notes\n\n## Setup\n\n```bash\n# install the tools\napt install jq\n```\n\n"
        "Then configure.\n"
    )
    assert {c.section for c in parsed.chunks} == {"Setup"}
    text = all_text(parsed)
    assert "# install the tools" in text
    assert "Then configure." in text


def test_obsidian_syntax_inside_a_code_fence_is_left_alone():
    parsed = parse("# T\n\n```\nsee [[Note|alias]] and ==x== %%keep%%\n```\n")
    assert "[[Note|alias]] and ==x== %%keep%%" in all_text(parsed)


# --- Obsidian syntax --------------------------------------------------------------


def test_an_aliased_wikilink_reads_as_its_alias():
    text = all_text(parse("# T\n\nAsk [[Max Mustermann|Max]] about it.\n"))
    assert text == "Ask Max about it."


def test_a_wikilink_to_a_heading_reads_as_note_and_heading():
    text = all_text(parse("# T\n\nSee [[Career plan#Next steps]] and [[#Budget]].\n"))
    assert "[[" not in text and "#" not in text
    assert "Career plan › Next steps" in text
    assert "Budget" in text


def test_a_plain_wikilink_reads_as_the_note_name():
    assert all_text(parse("# T\n\nLinked to [[Garden plan]].\n")) == "Linked to Garden plan."


def test_an_embed_reads_as_embedded_file():
    text = all_text(parse("# T\n\n![[image.png]]\n\n![[diagram.svg|300]]\n"))
    assert "[embedded: image.png]" in text
    assert "[embedded: diagram.svg]" in text
    assert "![[" not in text


def test_a_callout_reads_as_its_kind_and_title():
    text = all_text(
        parse("# T\n\n> [!warning] Title\n> Keep the receipt.\n\n> [!tip]- Folded\n> Hidden.\n")
    )
    assert "Warning — Title" in text
    assert "Tip — Folded" in text
    assert "Keep the receipt." in text
    assert "[!" not in text


def test_a_highlight_reads_as_plain_text():
    assert all_text(parse("# T\n\nThe deadline is ==Friday==.\n")) == "The deadline is Friday."


def test_comments_are_removed_including_multi_line_ones():
    text = all_text(
        parse("# T\n\nVisible %%hidden remark%% text.\n\n%%\nsecret block\nmore\n%%\n\nEnd.\n")
    )
    assert "hidden remark" not in text
    assert "secret block" not in text
    assert "%%" not in text
    assert "Visible" in text and "text." in text and "End." in text


# --- inline tags ------------------------------------------------------------------


def test_inline_tags_are_collected_into_the_record_tags():
    parsed = parse("# T\n\nApplied today #career and #Jobs/2026 plus #jobs/2026 again.\n")
    assert parsed.record.tags == ["career", "jobs/2026"]


def test_inline_tags_join_frontmatter_tags_without_duplicates():
    parsed = parse("---\ntags: [career]\n---\n# T\n\nMore #career and #health.\n")
    assert parsed.record.tags == ["career", "health"]


def test_a_hash_in_a_heading_is_not_a_tag():
    parsed = parse("# Plans #someday\n\n## Ideas #later\n\nNothing tagged here.\n")
    assert parsed.record.tags == []


def test_issue_numbers_and_anchors_are_not_tags():
    parsed = parse("# T\n\nFixed in #123 and #4567, see https://example.com/page#section and C#.\n")
    assert parsed.record.tags == []


def test_a_hash_in_a_code_fence_is_not_a_tag():
    parsed = parse("# T\n\n```c\n#include <stdio.h>\n#define MAX 3\n```\n\nReal #tag here.\n")
    assert parsed.record.tags == ["tag"]


def test_a_hash_in_inline_code_is_not_a_tag():
    parsed = parse("# T\n\nUse `#define` and `#pragma once` in headers. #cpp\n")
    assert parsed.record.tags == ["cpp"]


# --- frontmatter -----------------------------------------------------------------

RECORD_NOTE = """---
type: Job_Application
company: Acme Corp
status: Rejected
applied: 2026-08-01
tags: [Career, "#Jobs"]
salary: 85000
remote: true
recruiter: Dana
---
# Acme application

Sent the CV.
"""


def test_well_known_frontmatter_keys_become_record_fields():
    parsed = parse(RECORD_NOTE)
    record = parsed.record
    assert record.category == "job_application"
    assert record.entity == "Acme Corp"
    assert record.status == "rejected"
    assert record.event_date == date(2026, 8, 1)
    assert record.tags == ["career", "jobs"]
    assert record.header() == "job_application · Acme Corp · rejected"


def test_other_frontmatter_scalars_are_kept_as_x_keys():
    extra = parse(RECORD_NOTE).record.extra
    assert extra == {"x_salary": 85000, "x_remote": True, "x_recruiter": "Dana"}


def test_frontmatter_is_not_part_of_the_chunk_text():
    parsed = parse(RECORD_NOTE)
    assert all_text(parsed) == "Sent the CV."
    assert parsed.title == "Acme application"


def test_an_applied_date_is_an_event_date_but_does_not_date_the_document():
    parsed = parse(RECORD_NOTE)
    assert parsed.content_date is None
    assert parsed.content_date_source == ""


def test_category_entity_and_org_aliases_are_read():
    parsed = parse("---\ncategory: Health\norg: City Clinic\n---\n# T\n\nCheck-up.\n")
    assert parsed.record.category == "health"
    assert parsed.record.entity == "City Clinic"
    assert parsed.record.extra == {}


def test_tags_as_a_comma_or_space_separated_string_are_split():
    parsed = parse('---\ntags: "career, Jobs  #health"\n---\n# T\n\nBody.\n')
    assert parsed.record.tags == ["career", "jobs", "health"]
    assert parse("---\ntag: garden\n---\n# T\n\nBody.\n").record.tags == ["garden"]


def test_jarvis_own_fields_in_frontmatter_land_in_extra_only():
    parsed = parse(
        "---\nowner: max\nsharing: household\ncloud: allowed\nkind: pdf\n"
        "visibility: public\n---\n# Diary\n\nPrivate thoughts.\n"
    )
    assert parsed.record.extra == {
        "x_owner": "max",
        "x_sharing": "household",
        "x_cloud": "allowed",
        "x_kind": "pdf",
        "x_visibility": "public",
    }
    assert parsed.kind == "note"
    assert parsed.title == "Diary"
    assert (parsed.record.category, parsed.record.status, parsed.record.entity) == ("", "", "")
    assert parsed.record.tags == []


def test_malformed_frontmatter_still_indexes_the_body_with_a_warning():
    parsed = parse("---\ntitle: [unclosed\nstatus: : :\n---\n# Still here\n\nBody survives.\n")
    assert all_text(parsed) == "Body survives."
    assert parsed.title == "Still here"
    assert len(parsed.warnings) == 1
    assert "YAML" in parsed.warnings[0]
    assert parsed.record.extra == {} and parsed.record.status == ""


def test_a_nested_frontmatter_value_is_skipped_with_a_warning():
    parsed = parse("---\nstatus: open\nmeta:\n  a: 1\n  b: 2\n---\n# T\n\nBody.\n")
    assert parsed.record.status == "open"
    assert "x_meta" not in parsed.record.extra
    assert len(parsed.warnings) == 1
    assert "meta" in parsed.warnings[0]


def test_a_frontmatter_date_dates_the_document():
    parsed = parse("---\ndate: 2026-06-15\n---\n# Career plan\n\nGoals.\n")
    assert parsed.content_date == date(2026, 6, 15)
    assert parsed.content_date_source == "frontmatter"
    assert parsed.record.event_date == date(2026, 6, 15)


def test_a_frontmatter_date_wins_over_dated_headings():
    parsed = parse(
        "---\ndate: 2026-01-02\n---\n# Log\n\n## 2026-08-19\n\nA.\n\n## 2026-09-01\n\nB.\n"
    )
    assert parsed.content_date == date(2026, 1, 2)
    assert parsed.content_date_source == "frontmatter"


# --- dated headings ----------------------------------------------------------------

LOG_NOTE = """# Job search log

Started looking in summer.

## 2026-08-19

Sent the Acme application.

## September 2026

### October 5, 2026

Acme made an offer.

#### Details

Salary and start date.

## Ideas

Maybe ask about remote days.
"""


def test_a_note_with_several_dated_headings_is_a_log_with_dated_sections():
    parsed = parse(LOG_NOTE)
    dates = {c.section: c.section_date for c in parsed.chunks}
    assert dates == {
        "": None,
        "2026-08-19": date(2026, 8, 19),
        "September 2026 › October 5, 2026": date(2026, 10, 5),
        "September 2026 › October 5, 2026 › Details": date(2026, 10, 5),
        "Ideas": None,
    }


def test_a_log_is_dated_by_its_newest_section():
    parsed = parse(LOG_NOTE)
    assert parsed.content_date == date(2026, 10, 5)
    assert parsed.content_date_source == "section"


def test_a_newest_first_log_is_still_dated_by_its_newest_section():
    parsed = parse(
        "# Standups\n\n## 2026-10-07\n\nShipped.\n\n## 2026-10-06\n\nReviewed.\n\n"
        "## 2026-10-05\n\nPlanned.\n"
    )
    assert parsed.content_date == date(2026, 10, 7)
    assert parsed.content_date_source == "section"
    assert [c.section_date for c in parsed.chunks] == [
        date(2026, 10, 7),
        date(2026, 10, 6),
        date(2026, 10, 5),
    ]


def test_a_single_dated_heading_dates_the_document_without_making_it_a_log():
    parsed = parse("# Standup\n\n## August 18, 2026\n\nDemoed the parser.\n\n## Notes\n\nMore.\n")
    assert parsed.content_date == date(2026, 8, 18)
    assert parsed.content_date_source == "heading"
    assert parsed.content_date_precision == "day"
    assert all(c.section_date is None for c in parsed.chunks)


def test_a_dated_title_dates_the_document():
    parsed = parse("# Meeting 2026-09-14\n\nAgenda.\n")
    assert parsed.title == "Meeting 2026-09-14"
    assert parsed.content_date == date(2026, 9, 14)
    assert parsed.content_date_source == "heading"


def test_a_month_heading_dates_the_document_to_month_precision():
    parsed = parse("# Budget\n\n## October 2026\n\nRent and food.\n")
    assert parsed.content_date == date(2026, 10, 1)
    assert parsed.content_date_precision == "month"


def test_an_undated_note_has_no_content_date():
    parsed = parse("# Recipes\n\n## Soup\n\nOnions.\n\n## Bread\n\nFlour.\n")
    assert parsed.content_date is None
    assert parsed.content_date_source == ""
    assert all(c.section_date is None for c in parsed.chunks)


def test_a_date_in_the_body_text_does_not_date_the_document():
    parsed = parse("# Plan\n\nThe move happens on 2026-11-30 if all goes well.\n")
    assert parsed.content_date is None


def test_headings_that_only_look_like_dates_do_not_date_anything():
    parsed = parse("# Mayor election\n\n## Octopus care\n\nFeed daily.\n\n## Chapter 12\n\nX.\n")
    assert parsed.content_date is None
    assert all(c.section_date is None for c in parsed.chunks)


def test_breadcrumbs_are_plain_text_without_markdown_markup():
    parsed = parse("# T\n\n## Setup ##\n\nClosing hashes are not part of the heading.\n")
    assert [c.section for c in parsed.chunks] == ["Setup"]
    assert not re.search(r"#", parsed.chunks[0].section)
