"""Documents first: the first results name as many notes as match, each by
its best passage, before any note's second passage."""

from apps.library.ingest.sync import source_sync
from apps.library.search import search


def test_the_first_results_are_one_passage_of_each_matching_note(
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

    assert sorted(r.path for r in found) == [
        "home/boiler-log.md",
        "home/flat.md",
        "home/insurance.md",
    ]
    more = search(user=owner, query="boiler pressure", limit=5, embedder=embedder).results
    assert [r.path for r in more].count("home/boiler-log.md") == 2  # the per-note cap still holds
