"""Citation checking on the reply text itself: what survives, what is cut, and
that code in a reply is never touched."""

from __future__ import annotations

from apps.chats.citations import verify


def test_valid_citations_stay_and_invalid_ones_are_cut_and_counted():
    text, used, invalid = verify("Lisbon in May [2], flights booked [9]. Hotel [1][7].", {1, 2})
    assert text == "Lisbon in May [2], flights booked. Hotel [1]."
    assert used == [2, 1]
    assert invalid == 2


def test_cutting_between_words_leaves_one_space():
    assert verify("the plan [5] changed [1]", {1}) == ("the plan changed [1]", [1], 1)
    assert verify("ends here [5]\nnext line", set())[0] == "ends here\nnext line"


def test_code_blocks_and_inline_code_are_left_exactly_as_written():
    reply = (
        "Use this [1]:\n\n"
        "```python\n"
        "def first(xs):\n"
        "    return xs[0]  # two  spaces\n"
        "```\n\n"
        "and `ys[3]` too [4]."
    )
    text, used, invalid = verify(reply, {1})
    assert "    return xs[0]  # two  spaces\n" in text
    assert "`ys[3]`" in text
    assert text.endswith("too.")
    assert (used, invalid) == ([1], 1)


def test_prose_spacing_is_not_rewritten_when_nothing_is_cut():
    reply = "A table:\n\n| a  | b |\n|----|---|\n|  1 | 2 |\n\nIndented  text [1]."
    assert verify(reply, {1})[0] == reply
