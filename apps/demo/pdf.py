"""A small PDF with a highlight and a typed comment, generated for the demo
vaults (so a newcomer can see highlights found by search)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pymupdf


@dataclass(frozen=True)
class DemoPdf:
    title: str
    author: str
    pages: tuple[str, ...]
    highlight: str  # a phrase on the last page to highlight
    comment: str


def render(pdf: DemoPdf) -> bytes:
    document = pymupdf.open()
    document.set_metadata({"title": pdf.title, "author": pdf.author})
    for number, text in enumerate(pdf.pages, start=1):
        page = document.new_page(width=595, height=842)
        y = 72.0
        if number == 1:
            page.insert_text((72, y), pdf.title, fontsize=18)
            y += 36
        for paragraph in text.split("\n\n"):
            for line in textwrap.wrap(paragraph, 80):
                page.insert_text((72, y), line, fontsize=11)
                y += 15
            y += 10
    last = document[-1]
    quads = last.search_for(pdf.highlight, quads=True)
    if quads:
        annotation = last.add_highlight_annot(quads)
        annotation.set_info(content=pdf.comment)
        annotation.update()
    data = document.tobytes()
    document.close()
    return data


ALICE_PDF = DemoPdf(
    title="Heat pumps for older houses",
    author="Energy Advice Trust",
    pages=(
        "A heat pump moves heat rather than making it. In an older house the first question "
        "is how much heat the building loses on a cold day.\n\n"
        "Insulating the loft and draught-proofing windows usually pays back faster than any "
        "new heating system.",
        "Radiators may need to be larger, because a heat pump runs at a lower flow temperature "
        "than a gas boiler.\n\n"
        "Most installers recommend a flow temperature of 45 degrees or less for good efficiency.",
    ),
    highlight="flow temperature of 45 degrees or less",
    comment="Ask Priya whether our radiators are big enough for this.",
)

BOB_PDF = DemoPdf(
    title="Growing garlic at home",
    author="Allotment Society",
    pages=(
        "Garlic needs a cold spell to form cloves, so plant it in autumn and harvest in summer.",
        "Plant cloves pointed end up, 15 cm apart, with the tip just below the surface.\n\n"
        "Harvest when the lower leaves turn yellow, usually in late June or July.",
    ),
    highlight="Harvest when the lower leaves turn yellow",
    comment="Bed 1 garlic: check from mid June.",
)
