"""Project fixtures: the owner's vault shared with the household (cloud-allowed)
with a `projects/` folder, and a helper that syncs it and refreshes the registry."""

from __future__ import annotations

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from apps.projects.services import registry_refresh

QUBIT_AUG = """# QubitML — Quantum-Inspired ML Optimization

## Status: ACTIVE
Research with Prof. Sharma on quantum-inspired hyperparameter search.

## Next Steps
- Run the comparison against random search
- Draft the workshop paper
"""

QUBIT_OCT = """# QubitML — Quantum-Inspired ML Optimization

## Status: PAUSED

### What Actually Happened
Results were inconclusive: sometimes slightly better than grid search, never dramatically.

### Why Paused (October 2026)
- The project is too theoretical for my resume goals
- No internship is asking for quantum ML

### Key Numbers
- Speed-up over grid search: 1.4x on small problems
"""

PIXEL = """---
type: project
name: PixelNet
status: done
key_result: 91.3% CIFAR-10 test accuracy
---
# PixelNet — From-Scratch Image Classifier

A NumPy network for CIFAR-10. Final test accuracy: 91.3%.
"""


@pytest.fixture
def project_vault(owner, vault, make_source, embedder):
    vault.write("projects/qubitml_aug2026.md", QUBIT_AUG)
    vault.write("projects/qubitml_oct2026.md", QUBIT_OCT)
    vault.write("notes/pixelnet.md", PIXEL)
    vault.write("notes/shopping.md", "# Shopping\n\nOat milk.\n")
    source = make_source(
        owner,
        vault,
        sharing=Source.Sharing.HOUSEHOLD,
        cloud=Source.Cloud.ALLOWED,
        project_dirs=["projects"],
    )
    source_sync(source=source, embedder=embedder)
    return source


@pytest.fixture
def refresh(embedder):
    def run(**options):
        report = registry_refresh(embedder=embedder, **options)
        assert not report.problems, report.problems
        return report

    return run
