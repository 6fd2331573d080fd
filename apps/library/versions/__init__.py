"""Versions: which document replaces which, and which one is current.

A **version** is one document of a *family*: the files of one source that are
the same document at different times -- `boiler_2026-03.md` and
`boiler_2026-10.md`, `resume_v1` and `resume_v2`, a note moved into another
folder and updated there, a web page or paper fetched again from its URL.
Each family orders its members oldest first (`Document.family_position`); the
newest readable member is the family's **latest** version and every other one
is **superseded**. Who asks matters at search time: the current version for a
person is the newest one *they may see* (a newer copy in its owner's private
folder does not count for anyone else).

dates     dates in file names and text (year-first, month names, `10-2026`)
naming    version and copy markers (`draft` < none < `v1` < `v2` < `final`,
          `(1)`, `_backup`), family stems and generic names; pure functions
linking   ingest time: group a source's documents into families and pick the
          latest (same folder and stem, or content that says it moved)
timemode  which versions a question is about (present / history / lookup)
search    search time: family expansion, older versions sinking or going,
          slots per family, history expansion
queries   the database rules: "a newer version exists" and "a family's members"
          (the selectors scope them to a person)

The package sits low in the library: it imports the models and two pure
helpers (`apps.library.paths`, `apps.library.vectors`), never ingest, index or
search, which import it. Other apps reach it only through `selectors` and
`search` (the front-door contract in pyproject.toml).
"""
