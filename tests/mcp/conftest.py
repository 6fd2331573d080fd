"""MCP test data. The household itself (Olivia's vault shared with the
household and with cloud models, holding a planted marker in a private folder,
a private section and a project reason read from a private section; her
local-only vault with the marker and a project; Max's own notes with his
marker) is the `household` fixture of tests/support/fixtures.py, which the
chat's project tools use too. The marker must never come out of any MCP
tool, for anyone."""

from __future__ import annotations

from tests.support.fixtures import MARKER

# Questions aimed straight at the marker's passages, in every time mode.
PROBES = [
    MARKER,
    "blood pressure clinic",
    "quince orchard secret",
    "accountant reference tax",
    "diagnosis no lifting until spring",
    "birthday present quince jam",
]
