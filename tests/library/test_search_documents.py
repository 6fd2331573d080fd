"""Documents first: the first results name as many notes as match, each by
its best passage, before any note's second passage."""

from apps.library.ingest.sync import source_sync
from apps.library.search import search


def test_one_note_with_many_matching_passages_does_not_fill_the_first_results(
    owner, vault, make_source, embedder
):
    sections = "\n\n".join(
        f"## Boiler visit {n}\n\nThe engineer serviced the boiler and checked its pressure, "
        f"visit number {n} of the year."
        for n in range(6)
    )
    vault.write("home/boiler-log.md", f"# Boiler log\n\n{sections}\n")
    vault.write("home/flat.md", "# Flat\n\nThe boiler is in the hall cupboard.\n")
    vault.write("home/insurance.md", "# Insurance\n\nThe policy covers the boiler and pipes.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)

    found = search(user=owner, query="boiler pressure", limit=3, embedder=embedder).results

    # The log is the note about it, and first; six passages of it saying the
    # same do not fill the list: another note has a place in the first three.
    assert found[0].path == "home/boiler-log.md"
    assert {"home/flat.md", "home/insurance.md"} & {r.path for r in found}
    more = search(user=owner, query="boiler pressure", limit=5, embedder=embedder).results
    assert [r.path for r in more].count("home/boiler-log.md") == 2  # the per-note cap still holds
