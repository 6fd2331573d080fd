"""The household retrieval corpus (bench/corpora/household) is well-formed.

A typo in a question's paths would silently score a miss, a pass or a missed
leak in bench/retrieval_eval.py, so every path a question names must exist,
and be visible to the person asking (expected, superseded) or hidden from
them (forbidden), by the corpus's own sharing rules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pymupdf
import pytest

CORPUS_DIR = Path(__file__).resolve().parents[2] / "bench" / "corpora" / "household"
CATEGORIES = {
    "simple",
    "current_state",
    "history",
    "records",
    "project_status",
    "pdf",
    "privacy",
    "cross_document",
}
FIELDS = {
    "id",
    "user",
    "question",
    "category",
    "expected_sources",
    "superseded_sources",
    "forbidden_sources",
    "notes",
}


def _load_corpus():
    # corpus.py sits beside the corpus files, outside any package.
    spec = importlib.util.spec_from_file_location("household_corpus", CORPUS_DIR / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
QUESTIONS = corpus.questions()


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory) -> Path:
    return corpus.materialise(tmp_path_factory.mktemp("household") / "vaults")


def test_every_question_has_its_fields_a_known_category_and_a_real_asker():
    assert len({q["id"] for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        assert set(q) == FIELDS, q["id"]
        assert q["category"] in CATEGORIES, q["id"]
        assert q["user"] in corpus.PEOPLE, q["id"]
        assert q["question"].strip(), q["id"]
        # Only privacy questions may be scored for leaks alone.
        assert q["expected_sources"] or q["category"] == "privacy", q["id"]
        assert not set(q["expected_sources"]) & set(q["superseded_sources"]), q["id"]


def test_every_source_a_question_names_exists(laid_out):
    files = {p.relative_to(laid_out).as_posix() for p in laid_out.rglob("*") if p.is_file()}
    for q in QUESTIONS:
        for key in ("expected_sources", "superseded_sources", "forbidden_sources"):
            missing = set(q[key]) - files
            assert not missing, f"{q['id']} {key}: {missing}"


def test_expected_and_older_versions_are_visible_to_the_asker_and_forbidden_ones_are_not():
    for q in QUESTIONS:
        for path in q["expected_sources"] + q["superseded_sources"]:
            assert corpus.may_see(q["user"], path), f"{q['id']}: {q['user']} cannot see {path}"
        for path in q["forbidden_sources"]:
            assert not corpus.may_see(q["user"], path), f"{q['id']}: {q['user']} may see {path}"


def test_private_folders_are_hidden_from_everyone_but_their_owner():
    assert corpus.may_see("rosa", "rosa/private/counselling_notes.md")
    assert not corpus.may_see("felix", "rosa/private/counselling_notes.md")
    assert corpus.may_see("felix", "rosa/health/physio_knee.md")
    assert not corpus.may_see("rosa", "hana/school/todo.md")  # Hana shares nothing


def test_it_holds_enough_notes_pdfs_and_questions_of_every_kind(laid_out):
    assert len(list(laid_out.rglob("*.md"))) >= 40
    assert len(list(laid_out.rglob("*.pdf"))) >= 3
    assert len(QUESTIONS) >= 50
    assert {q["category"] for q in QUESTIONS} == CATEGORIES
    assert sum(bool(q["superseded_sources"]) for q in QUESTIONS) >= 20
    assert sum(bool(q["forbidden_sources"]) for q in QUESTIONS) >= 8


def test_file_times_name_files_of_the_corpus():
    for path in corpus.MTIMES:
        assert (CORPUS_DIR / path).is_file(), path


def test_the_pdfs_carry_highlights_with_typed_comments(laid_out):
    commented = 0
    for spec in corpus.PDFS:
        with pymupdf.open(laid_out / spec.path) as document:
            for page in document:
                for annotation in page.annots():
                    if annotation.type[1] == "Highlight" and annotation.info["content"]:
                        commented += 1
    assert commented >= 3


def test_the_pdfs_are_built_the_same_every_time(tmp_path):
    first = [p.read_bytes() for p in corpus.build_pdfs(tmp_path / "a")]
    second = [p.read_bytes() for p in corpus.build_pdfs(tmp_path / "b")]
    assert first == second
