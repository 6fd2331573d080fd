"""Hunks: what the review shows is exactly what applying writes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from apps.drafts.hunks import apply_hunks, diff_hunks, lines_of

_lines = st.lists(
    st.sampled_from(["a\n", "b\n", "c\n", "d\n", "\n", "long line\n", "x"]), max_size=30
)


def _text(lines: list[str]) -> str:
    # A bare "x" may only end the text (it has no newline).
    return "".join(line for line in lines[:-1] if line != "x") + (lines[-1] if lines else "")


@given(old=_lines, new=_lines)
def test_accepting_all_gives_the_new_text_and_none_the_old(old, new):
    old_text, new_text = _text(old), _text(new)
    hunks = diff_hunks(old_text, new_text)
    assert apply_hunks(old_text, hunks, {h.index for h in hunks}) == new_text
    assert apply_hunks(old_text, hunks, set()) == old_text


@given(old=_lines, new=_lines, data=st.data())
def test_any_subset_applies_each_hunk_from_the_side_chosen(old, new, data):
    old_text, new_text = _text(old), _text(new)
    hunks = diff_hunks(old_text, new_text)
    chosen = data.draw(
        st.sets(st.sampled_from([h.index for h in hunks])) if hunks else st.just(set())
    )
    merged = apply_hunks(old_text, hunks, chosen)
    assert apply_hunks(old_text, hunks, chosen) == merged  # deterministic
    # Rebuild from the rendered hunks alone: untouched old lines between them,
    # each hunk's lines from the side the person picked.
    a = lines_of(old_text)
    expected, position = [], 0
    for hunk in hunks:
        assert a[hunk.old_start : hunk.old_end] == hunk.old_lines
        expected += a[position : hunk.old_start]
        expected += hunk.new_lines if hunk.index in chosen else hunk.old_lines
        position = hunk.old_end
    assert merged == "".join(expected + a[position:])


@given(old=_lines, new=_lines)
def test_spans_mark_exactly_the_changed_lines(old, new):
    hunks = diff_hunks(_text(old), _text(new))
    for hunk in hunks:
        old_changed = {i for a, b in hunk.old_spans for i in range(a, b)}
        new_changed = {i for a, b in hunk.new_spans for i in range(a, b)}
        assert old_changed or new_changed
        # Lines outside the spans are context: the same on both sides, in order.
        old_context = [line for i, line in enumerate(hunk.old_lines) if i not in old_changed]
        new_context = [line for i, line in enumerate(hunk.new_lines) if i not in new_changed]
        assert old_context == new_context


def test_kind_comes_from_what_changed_not_from_line_counts():
    old = "one\ntwo\nthree\nfour\nfive\n"
    (added,) = diff_hunks(old, old.replace("three\n", "three\nthree and a half\n"))
    (removed,) = diff_hunks(old, old.replace("three\n", ""))
    (replaced,) = diff_hunks(old, old.replace("three\n", "THREE\n"))
    assert (added.kind, removed.kind, replaced.kind) == ("add", "remove", "replace")
    # Context on both sides, yet only the new line is marked as changed.
    assert added.old_lines and added.new_lines
    assert added.new_spans == [(3, 4)] and added.old_spans == []
    assert replaced.old_spans == [(2, 3)] and replaced.new_spans == [(2, 3)]


def test_far_apart_changes_are_separate_hunks():
    old = "".join(f"line {i}\n" for i in range(40))
    new = old.replace("line 2\n", "line two\n").replace("line 35\n", "")
    hunks = diff_hunks(old, new)
    assert [h.kind for h in hunks] == ["replace", "remove"]
    assert apply_hunks(old, hunks, {1}) == old.replace("line 35\n", "")


def test_changes_with_unchanged_lines_between_are_separate_hunks():
    # Within 3 lines of each other, yet each can be accepted on its own.
    old = "".join(f"line {i}\n" for i in range(12))
    new = old.replace("line 4\n", "line four\n").replace("line 6\n", "line six\n")
    hunks = diff_hunks(old, new)
    assert [h.kind for h in hunks] == ["replace", "replace"]
    assert apply_hunks(old, hunks, {0}) == old.replace("line 4\n", "line four\n")
    assert apply_hunks(old, hunks, {1}) == old.replace("line 6\n", "line six\n")
    # The one unchanged line between them is context once, not twice.
    assert hunks[0].old_end <= hunks[1].old_start


def test_adjacent_changed_lines_stay_one_hunk():
    old = "".join(f"line {i}\n" for i in range(12))
    new = old.replace("line 4\nline 5\n", "line four\nline five\n")
    (hunk,) = diff_hunks(old, new)
    assert hunk.old_spans == [(3, 5)]
