"""The Markdown a digest is made of: the tiered digest file, and the summary
entry written for a paper that goes into the library without its full text.

Titles, authors, summaries and reasons come from paper APIs and a model:
untrusted. They are put in as text (Markdown punctuation escaped, line breaks
flattened) so a title cannot open a heading, a link or an HTML block, and the
frontmatter is written by a YAML dumper, so a title cannot add a key either.
Links are built by Jarvis from identifiers (apps.library.ingest.arxiv, doi_link).
Whatever still got through is rendered through the one Markdown path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime

import yaml
from django.template.defaultfilters import pluralize

from apps.digest.papers import TIER_TITLES, TIERS, Paper

DIGEST_TAG = "paper-digest"
SUMMARY_TAG = "paper-summary"
# Characters that start inline syntax anywhere (emphasis, code, links, autolinks,
# table cells, strikethrough)…
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
# …and what starts a block at the beginning of a line (heading, list, quote, rule).
_BLOCK_START = re.compile(r"^(?:[#+=>-]|\d+[.)])")


def inline(text: str) -> str:
    """Untrusted text as one line of literal Markdown text."""
    escaped = _INLINE_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    match = _BLOCK_START.match(escaped)
    if match:
        escaped = escaped[: match.end() - 1] + "\\" + escaped[match.end() - 1 :]
    return escaped


def link(text: str, url: str) -> str:
    # <…> keeps a URL with parentheses in one piece; URLs here are built by
    # Jarvis, but a stray '>' or space would still end it, so those are encoded.
    safe = url.replace(" ", "%20").replace(">", "%3E").replace("<", "%3C")
    return f"[{inline(text)}](<{safe}>)"


def frontmatter(fields: dict) -> str:
    return "---\n" + yaml.safe_dump(fields, allow_unicode=True, sort_keys=False) + "---\n"


def score_text(score: float | None) -> str:
    if score is None:
        return "not scored"
    return f"{score:g}/10"


def byline(paper: Paper) -> str:
    parts = []
    if paper.authors:
        shown = paper.authors[:6]
        more = len(paper.authors) - len(shown)
        parts.append(inline(", ".join(shown) + (f" and {more} more" if more else "")))
    parts.append(inline(paper.source))
    if paper.published:
        parts.append(paper.published.isoformat())
    return " · ".join(parts)


def paper_block(paper: Paper) -> str:
    """One paper of the Must read / Worth reading tiers: heading, byline,
    score and track, summary, why."""
    lines = [
        f"### {link(paper.title, paper.link)}",
        "",
        byline(paper),
        "",
        f"**{score_text(paper.score)}** · track: {inline(paper.track or 'other')}",
        "",
        inline(paper.summary),
    ]
    if paper.why:
        lines += ["", f"*Why:* {inline(paper.why)}"]
    return "\n".join(lines) + "\n"


def skim_text(paper: Paper) -> str:
    """One paper of the Skim tier, on one line."""
    summary = f" {inline(paper.summary)}" if paper.summary else ""
    track = f" · {inline(paper.track)}" if paper.track else ""
    return (
        f"{link(paper.title, paper.link)} · {inline(paper.source)} · "
        f"**{score_text(paper.score)}**{track}.{summary}"
    )


def unscored_text(paper: Paper) -> str:
    return f"{link(paper.title, paper.link)} · {inline(paper.source)}"


def title_for(day: date) -> str:
    return f"Paper digest — {day.isoformat()}"


def header(
    *,
    day: date,
    generated: datetime,
    model_label: str,
    counts: Iterable[tuple[str, int]],
    fetched: int,
    deduplicated: int,
    known: int,
    scored: int,
) -> str:
    sources = ", ".join(f"{inline(label)} {n}" for label, n in counts) or "no sources"
    return (
        f"# {title_for(day)}\n\n"
        f"Generated {generated:%Y-%m-%d %H:%M} · scored by {inline(model_label)}\n\n"
        f"Fetched {fetched} ({sources}) · {deduplicated} after removing duplicates "
        f"({known} already in your library) · {scored} scored.\n"
    )


def tier_section(tier: str, papers: list[Paper]) -> str:
    heading = {
        "must": f"## {TIER_TITLES['must']} (score 9 and above)",
        "worth": f"## {TIER_TITLES['worth']} (score 8 to 9)",
        "skim": f"## {TIER_TITLES['skim']} (below 8)",
    }[tier]
    if not papers:
        return f"{heading}\n\nNone this week.\n"
    if tier == "skim":
        return heading + "\n\n" + "\n".join(f"- {skim_text(p)}" for p in papers) + "\n"
    return heading + "\n\n" + "\n".join(paper_block(p) for p in papers)


def unscored_section(papers: list[Paper], failures: list[dict]) -> str:
    lines = [f"## {TIER_TITLES['unscored']}", ""]
    for failure in failures:
        lines.append(
            f"Batch {failure['number']} ({len(failure['papers'])} paper"
            f"{pluralize(len(failure['papers']))}) could not be "
            f"scored: {inline(failure['reason'])}."
        )
        lines.append("")
    lines += [f"- {unscored_text(p)}" for p in papers]
    return "\n".join(lines) + "\n"


def by_tier(papers: list[Paper]) -> dict[str, list[Paper]]:
    groups: dict[str, list[Paper]] = {tier: [] for tier in (*TIERS, "unscored")}
    for paper in papers:
        groups[paper.tier].append(paper)
    for tier in TIERS:
        groups[tier].sort(key=lambda p: (-(p.score or 0), p.n))
    return groups


def digest_markdown(
    *,
    day: date,
    generated: datetime,
    model_label: str,
    papers: list[Paper],
    counts: list[tuple[str, int]],
    fetched: int,
    deduplicated: int,
    known: int,
    failures: list[dict],
) -> str:
    groups = by_tier(papers)
    parts = [
        frontmatter({"title": title_for(day), "date": day.isoformat(), "tags": [DIGEST_TAG]}),
        header(
            day=day,
            generated=generated,
            model_label=model_label,
            counts=counts,
            fetched=fetched,
            deduplicated=deduplicated,
            known=known,
            scored=sum(len(groups[t]) for t in TIERS),
        ),
    ]
    parts += [tier_section(tier, groups[tier]) for tier in TIERS]
    if groups["unscored"] or failures:
        parts.append(unscored_section(groups["unscored"], failures))
    return "\n".join(parts)


def summary_entry(paper: Paper, *, digest_day: date, warning: str = "") -> str:
    """The Markdown of a summary entry: what the library keeps of a paper
    whose full text it does not have. The abstract comes along, so searching
    the library finds the paper by what it is about."""
    fields: dict = {"title": paper.title, "tags": [DIGEST_TAG, SUMMARY_TAG]}
    lines = [
        frontmatter(fields),
        f"# {inline(paper.title)}",
        "",
        byline(paper),
        "",
        f"Link: {link(paper.link, paper.link)}",
        "",
        f"> Summary entry from your paper digest of {digest_day.isoformat()} "
        f"(score {score_text(paper.score)}, track: {inline(paper.track or 'other')}). "
        "The full text is not in your library.",
    ]
    if warning:
        lines += ["", f"> {inline(warning)}"]
    lines += ["", "## Summary", "", inline(paper.summary or "(none)")]
    if paper.why:
        lines += ["", "## Why it was picked", "", inline(paper.why)]
    if paper.abstract:
        lines += ["", "## Abstract", "", inline(paper.abstract)]
    return "\n".join(lines) + "\n"
