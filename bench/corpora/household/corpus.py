"""The household corpus as code: who lives there, whose folder is whose and
how it is shared, the PDFs (generated here, never committed as binaries) and
the files' modification times.

`materialise(target)` lays out a ready-to-sync copy of the four folders under
`target`; `may_see(username, path)` is the corpus's own statement of who may
read what (used to count leaks, independently of Jarvis's code).

    .venv/bin/python bench/corpora/household/corpus.py OUTDIR   # to look at it
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
PEOPLE = ("rosa", "felix", "hana")
PRIVATE_DIR = "private"


@dataclass(frozen=True)
class Folder:
    name: str  # the folder under the corpus root, and the source's name
    owner: str
    sharing: str  # "household" or "owner", as `kb sources add --share` takes it


FOLDERS = (
    Folder("household", owner="rosa", sharing="household"),
    Folder("rosa", owner="rosa", sharing="household"),
    Folder("felix", owner="felix", sharing="household"),
    # Hana, 17, keeps her notes to herself: her whole vault is owner-only.
    Folder("hana", owner="hana", sharing="owner"),
)

# A household syncs files whose times roughly follow when they were written.
# Every file not listed gets DEFAULT_MTIME (the evening it was all synced);
# older versions get the time they were last edited. The moved driving note is
# the one pair dated by nothing but these times.
DEFAULT_MTIME = "2026-11-20T18:00:00"
MTIMES = {
    "household/home/gutters_and_roof_2026-03.md": "2026-03-11T19:30:00",
    "household/home/gutters_and_roof_2026-10.md": "2026-10-14T20:05:00",
    "household/home/damp_back_bedroom_v1.md": "2026-08-30T11:00:00",
    "household/home/damp_back_bedroom_v2.md": "2026-10-25T10:40:00",
    "household/bin_collection.md": "2025-09-02T08:15:00",
    "household/council/bin_collection.md": "2026-09-15T21:10:00",
    "household/wifi_and_broadband.md": "2026-03-22T16:00:00",
    "household/home/tech/wifi_and_broadband.md": "2026-10-04T12:30:00",
    "household/insurance/home_insurance_sep2025.md": "2025-08-29T18:00:00",
    "household/insurance/home_insurance_sep2026.md": "2026-08-28T18:45:00",
    "household/finance/monthly_budget_jan2026.md": "2026-01-03T10:00:00",
    "household/finance/monthly_budget_jul2026.md": "2026-07-04T10:20:00",
    "household/finance/subscriptions_2026-01.md": "2026-01-03T10:30:00",
    "household/finance/subscriptions_2026-08.md": "2026-08-01T09:00:00",
    "household/car/car_service_2025-11.md": "2025-11-18T17:00:00",
    "household/car/car_service_2026-11.md": "2026-11-12T17:30:00",
    "household/car/car_service_2026-11 copy.md": "2026-11-12T17:30:00",
    "household/travel/japan_trip_plan_v1.md": "2026-06-14T21:00:00",
    "household/travel/japan_trip_plan_v2.md": "2026-09-06T20:30:00",
    "household/travel/japan_trip_plan_final.md": "2026-11-03T22:10:00",
    "household/recipes/sunday_focaccia_v1.md": "2026-02-08T15:00:00",
    "household/recipes/sunday_focaccia_v2.md": "2026-05-17T14:00:00",
    "rosa/projects/garden_studio_2026-04.md": "2026-04-12T20:00:00",
    "rosa/projects/garden_studio_2026-07.md": "2026-07-12T21:00:00",
    "rosa/projects/garden_studio_2026-10.md": "2026-10-03T19:00:00",
    "rosa/projects/bathroom_refit_v1.md": "2026-02-20T19:00:00",
    "rosa/projects/bathroom_refit_v2.md": "2026-04-09T18:00:00",
    "rosa/family/mum_care_plan_2026-05.md": "2026-05-02T17:00:00",
    "rosa/family/mum/mum_care_plan_2026-09.md": "2026-09-10T21:30:00",
    "felix/jobs/salary_expectations.md": "2026-07-10T09:00:00",
    "felix/private/salary_expectations.md": "2026-10-24T23:15:00",
    "felix/projects/home_server_rev1.md": "2026-08-16T11:00:00",
    "felix/projects/home_server_rev2.md": "2026-11-02T22:00:00",
    "hana/school/timetable_2025-09.md": "2025-09-05T18:00:00",
    "hana/school/timetable_2026-09.md": "2026-09-04T18:30:00",
    "hana/school/epq_plan_rev1.md": "2026-07-01T14:00:00",
    "hana/school/epq_plan_rev2.md": "2026-10-02T16:00:00",
    "hana/driving_lessons.md": "2026-06-11T19:00:00",
    "hana/driving/driving_lessons.md": "2026-10-29T20:00:00",
}


@dataclass(frozen=True)
class Mark:
    """An annotation a person made: a highlight over `phrase` (with an
    optional typed comment), or a sticky note (`phrase` empty) with `comment`."""

    page: int  # 1-based
    phrase: str
    comment: str
    author: str


@dataclass(frozen=True)
class Pdf:
    path: str  # relative to the corpus root
    title: str
    author: str
    pages: tuple[str, ...]
    marks: tuple[Mark, ...]


PDFS = (
    Pdf(
        path="household/insurance/harbour_mutual_policy_wording.pdf",
        title="Harbour Mutual Home Insurance: Policy Wording 2026",
        author="Harbour Mutual",
        pages=(
            "About this policy. This booklet, together with your schedule, makes up your "
            "contract with Harbour Mutual. Your schedule shows which sections you have "
            "chosen, your sums insured and your excesses.\n\n"
            "Section 1, Buildings. We cover the structure of your home, its fixtures and "
            "fittings, outbuildings, drives, paths, walls and fences against loss or damage "
            "caused by fire, smoke, storm, flood, subsidence, theft and escape of water.",
            "Excesses. The standard excess shown on your schedule applies to each claim. "
            "The escape of water excess is £500 for each claim, whatever excess you have "
            "chosen. An excess of £1,000 applies to subsidence claims.\n\n"
            "Section 2, Contents. We cover your household goods and personal belongings in "
            "the home. Personal belongings taken away from the home are covered only for "
            "items named on your schedule.",
            "When your home is empty. We will not pay for loss or damage by theft, escape of "
            "water or malicious damage if your home has been unoccupied for more than 30 "
            "consecutive days. During any cold months, keep the heating at 12 degrees or "
            "drain the water system.\n\n"
            "Accidental damage is not included unless your schedule shows it. How to claim: "
            "call our claims line, 24 hours a day, and keep the damaged items.",
        ),
        marks=(
            Mark(
                page=2,
                phrase="The escape of water excess is £500 for each claim",
                comment="Double our normal excess. If the washing machine hose goes again, "
                "only claim if it's well over £500.",
                author="Rosa",
            ),
            Mark(
                page=3,
                phrase="unoccupied for more than 30 consecutive days",
                comment="Japan is 16 nights, so we're fine. Ask Nadia to pop in anyway "
                "and leave the heating on low.",
                author="Rosa",
            ),
            Mark(
                page=1,
                phrase="",
                comment="Policy HM-208815, paid in full on 28 August. Renews 3 September 2027.",
                author="Rosa",
            ),
        ),
    ),
    Pdf(
        path="household/car/octavia_handbook_extract.pdf",
        title="Octavia Estate Owner's Handbook (extract)",
        author="Skoda Auto",
        pages=(
            "Wheels and tyres. Check tyre pressures at least once a month and before a long "
            "journey, with the tyres cold. The correct pressures for your vehicle are also "
            "shown on the sticker inside the fuel filler flap.\n\n"
            "Recommended pressures for normal load: 2.3 bar (33 psi) front, 2.2 bar (32 psi) "
            "rear. For full load, see the table on the filler flap.",
            "Changing a wheel. The spare wheel, jack and wheel brace are under the floor of "
            "the luggage compartment. Vehicles with anti-theft wheel bolts need the adapter "
            "to loosen them.\n\n"
            "Warning lights. A yellow tyre symbol means a tyre has lost pressure: stop when "
            "it is safe and check all four tyres, then store the new pressures in the "
            "infotainment system.",
        ),
        marks=(
            Mark(
                page=1,
                phrase="2.3 bar (33 psi) front, 2.2 bar (32 psi) rear",
                comment="Loaded up for holidays (roof box, three of us): 2.6 bar front, "
                "3.0 bar rear.",
                author="Felix",
            ),
            Mark(
                page=2,
                phrase="",
                comment="The locking wheel nut adapter is in the glovebox, NOT with the jack.",
                author="Felix",
            ),
        ),
    ),
    Pdf(
        path="rosa/health/knee_exercise_sheet.pdf",
        title="Knee Rehabilitation: Home Exercise Programme",
        author="Clifton Clinic Physiotherapy",
        pages=(
            "Do these exercises once a day unless your physiotherapist tells you otherwise. "
            "Mild discomfort is expected; sharp pain is not.\n\n"
            "1. Straight leg raise: lying on your back, lift the straight leg to the height "
            "of the other knee. 3 sets of 10.\n\n"
            "2. Wall sit: back against a wall, knees at 45 degrees. 3 holds of 30 seconds.\n\n"
            "3. Step-downs from a low step: lower the other heel slowly to the floor. "
            "3 sets of 10.",
            "4. Forward lunges: step forward and lower the back knee towards the floor. "
            "3 sets of 8 each side.\n\n"
            "5. Calf raises on a step: 3 sets of 15.\n\n"
            "If an exercise makes your pain worse for more than 24 hours, stop it and tell "
            "your physiotherapist at your next appointment.",
        ),
        marks=(
            Mark(
                page=2,
                phrase="Forward lunges",
                comment="Imogen: stop these until the December review, they flare it up.",
                author="Rosa",
            ),
            Mark(
                page=1,
                phrase="Step-downs from a low step",
                comment="Every day, slowly, both legs. The main one.",
                author="Rosa",
            ),
        ),
    ),
    Pdf(
        path="felix/private/redundancy_letter.pdf",
        title="Notice of Redundancy",
        author="Harrowgate Freight Ltd",
        pages=(
            "Dear Felix, Further to our consultation meetings, I am sorry to confirm that your "
            "role as Senior Data Analyst is redundant. Your employment will end on 30 June "
            "2026.\n\n"
            "You will receive statutory redundancy pay of £13,020 and an enhanced payment of "
            "£9,500, together with payment in lieu of your three months' notice and your "
            "accrued holiday.\n\n"
            "The enhanced payment is conditional on a settlement agreement, which must be "
            "signed and returned by 14 July 2026. We will contribute up to £500 towards "
            "independent legal advice on the agreement.",
        ),
        marks=(
            Mark(
                page=1,
                phrase="signed and returned by 14 July 2026",
                comment="Hartley Law will check it for the £500. Book them this week.",
                author="Felix",
            ),
        ),
    ),
)

PDF_DATE = "D:20261120180000Z"  # fixed, so the bytes are the same on every build


def render_pdf(pdf: Pdf) -> bytes:
    document = pymupdf.open()
    document.set_metadata(
        {
            "title": pdf.title,
            "author": pdf.author,
            "creationDate": PDF_DATE,
            "modDate": PDF_DATE,
            "producer": "",
            "creator": "",
        }
    )
    for number, text in enumerate(pdf.pages, start=1):
        page = document.new_page(width=595, height=842)
        y = 72.0
        if number == 1:
            page.insert_text((72, y), pdf.title, fontsize=16)
            y += 34
        for paragraph in text.split("\n\n"):
            for line in textwrap.wrap(paragraph, 84):
                page.insert_text((72, y), line, fontsize=11)
                y += 15
            y += 9
    for mark in pdf.marks:
        page = document[mark.page - 1]
        if mark.phrase:
            quads = page.search_for(mark.phrase, quads=True)
            if not quads:
                raise ValueError(f"{pdf.path}: {mark.phrase!r} is not on page {mark.page}")
            annotation = page.add_highlight_annot(quads)
        else:
            annotation = page.add_text_annot((520, 60), mark.comment)
        annotation.set_info(
            content=mark.comment, title=mark.author, creationDate=PDF_DATE, modDate=PDF_DATE
        )
        annotation.update()
    data = document.tobytes(garbage=3, deflate=True, no_new_id=True)
    document.close()
    return data


def build_pdfs(root: Path) -> list[Path]:
    """Write every PDF under `root` at its corpus path; returns the paths."""
    written = []
    for pdf in PDFS:
        target = root / pdf.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(render_pdf(pdf))
        written.append(target)
    return written


def _timestamp(value: str) -> float:
    return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp()


def materialise(target: Path) -> Path:
    """Copy the four folders under `target`, add the PDFs, set every file's
    modification time; returns `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for folder in FOLDERS:
        shutil.copytree(HERE / folder.name, target / folder.name)
    build_pdfs(target)
    default = _timestamp(DEFAULT_MTIME)
    for path in sorted(target.rglob("*")):
        if path.is_file():
            stamp = MTIMES.get(path.relative_to(target).as_posix())
            when = _timestamp(stamp) if stamp else default
            os.utime(path, (when, when))
    return target


def folder_of(path: str) -> Folder:
    top = path.split("/", 1)[0]
    return next(f for f in FOLDERS if f.name == top)


def may_see(username: str, path: str) -> bool:
    """Owners see all of their folder; the household sees a shared folder
    except its private/ subfolder."""
    folder = folder_of(path)
    if folder.owner == username:
        return True
    inner = path.split("/", 1)[1]
    return folder.sharing == "household" and not inner.startswith(f"{PRIVATE_DIR}/")


def questions() -> list[dict]:
    return json.loads((HERE / "questions.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: corpus.py OUTDIR")
    print(materialise(Path(sys.argv[1])))
