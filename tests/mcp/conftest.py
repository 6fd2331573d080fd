"""An MCP household: Olivia's vault shared with the household and with cloud
models, holding a planted marker in a private folder, a private section and
a project reason read from a private section; her local-only vault with the
marker and a project; Max's own notes (owner-only) with the marker. The
marker must never come out of any MCP tool, for anyone."""

from __future__ import annotations

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from apps.projects.services import registry_refresh
from tests.library.conftest import (  # noqa: F401
    embedder,
    make_source,
    make_vault,
    vault,
    vaults_root,
)

MARKER = "zebracorn-4417"  # in Olivia's private and local-only notes
MAX_MARKER = "walrus-5150"  # in Max's own (owner-only) notes: his, nobody else's

SHARED_NOTES = {
    "boiler_2025-03.md": "# Boiler\n\nThe boiler was serviced on 3 March 2025 by Hale & Sons.\n",
    "boiler_2026-03.md": "# Boiler\n\nThe boiler was serviced on 9 March 2026 by Brightwarm.\n",
    "handover.md": (
        "# Weekly handover\n\n## Garden\nThe quince tree needs pruning before the frost.\n\n"
        f"## Health <!-- private -->\nBlood pressure code {MARKER} from the clinic.\n\n"
        "## Plans\nRepaint the shed in the spring.\n"
    ),
    "private/diary.md": f"# Diary\n\nThe quince orchard secret is {MARKER}.\n",
    "projects/shed.md": (
        "# Shed rebuild\n\n## Status: PAUSED\n\n"
        f"## Why paused <!-- private -->\n- The {MARKER} diagnosis: no lifting until spring\n\n"
        "## Next steps\n- Order the timber\n"
    ),
    "projects/pixelnet.md": (
        "# PixelNet — From-Scratch Image Classifier\n\n## Status: DONE\n\n"
        "### Key Numbers\n- Test accuracy: 91.3% on CIFAR-10\n"
    ),
}


@pytest.fixture
def household(owner, member, make_vault, make_source, embedder):  # noqa: F811
    shared = make_vault("olivia-shared")
    for path, text in SHARED_NOTES.items():
        shared.write(path, text)
    source_sync(
        source=make_source(
            owner,
            shared,
            name="home",
            sharing=Source.Sharing.HOUSEHOLD,
            cloud=Source.Cloud.ALLOWED,
            project_dirs=["projects"],
        ),
        embedder=embedder,
    )
    local = make_vault("olivia-local")
    local.write("tax.md", f"# Tax\n\nThe accountant's reference is {MARKER}, quince orchard.\n")
    local.write(
        "taxes_project.md",
        f"---\ntype: project\nstatus: blocked\n---\n# Tax return\n\nWaiting, ref {MARKER}.\n",
    )
    source_sync(source=make_source(owner, local, name="local"), embedder=embedder)
    theirs = make_vault("max-own")
    theirs.write("gifts.md", f"# Gifts\n\nOlivia's birthday present: quince jam, {MAX_MARKER}.\n")
    source_sync(
        source=make_source(member, theirs, name="max", cloud=Source.Cloud.ALLOWED),
        embedder=embedder,
    )
    report = registry_refresh(embedder=embedder)
    assert not report.problems, report.problems


# Questions aimed straight at the marker's passages, in every time mode.
PROBES = [
    MARKER,
    "blood pressure clinic",
    "quince orchard secret",
    "accountant reference tax",
    "diagnosis no lifting until spring",
    "birthday present quince jam",
]
