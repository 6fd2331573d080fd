"""Citations by code when the model gives none.

Small models often answer rightly from the passages they were given and cite
nothing. When an answer cites nothing, each of its sentences is compared with
the turn's passages: a sentence whose content words are mostly in one passage
(ATTRIBUTE_SHARE of them, at least ATTRIBUTE_MIN_WORDS words) gets that
passage's [n] at its end. The numbers are then verified exactly as a model's
would be (apps.chats.citations.verify), and the reply says they were
attributed by Jarvis. Only when no sentence matches is the model asked to cite.
"""

from __future__ import annotations

import re

ATTRIBUTE_SHARE = 0.6
ATTRIBUTE_MIN_WORDS = 3
ATTRIBUTED_NOTE = (
    "Citations attributed by Jarvis: the model cited nothing, so its sentences were "
    "matched to the passages they repeat."
)

# A sentence ends at . ! or ? followed by a space, a line end or the end: a
# point inside "91.3%", "boiler.md" or "v2.1" is not an end (a citation put
# there read "91 [3].3%").
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+[.!?]*")
# Nor is the point of a title or an initial: "Prof. Sharma" is one sentence
# (split there, it read "Prof [3]. Sharma").
_ABBREVIATION = re.compile(
    r"(?:\b(?:Prof|Dr|Mr|Mrs|Ms|Mx|St|Jr|Sr|Rev|Gen|Col|Capt|Lt|Sgt|vs|etc|approx|no|vol|fig|ca)"
    r"|\b[A-Z]|\be\.g|\bi\.e)\.$",
    re.I,
)
_WORD = re.compile(r"\w+")
_COMMON = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i
    in is it its me my of on or our that the their them then there these they this to
    was we were what when where which who will with would you your about not no yes so
    also just than only very""".split()  # noqa: SIM905
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON and len(w) > 1}


def _sentences(text: str) -> list[tuple[int, int]]:
    """The sentences' spans; one that ends in a title or an initial runs on
    into the next."""
    spans: list[tuple[int, int]] = []
    joined = False
    for match in _SENTENCE.finditer(text):
        if joined and text[spans[-1][1] : match.start()].strip() == "":
            spans[-1] = (spans[-1][0], match.end())
        else:
            spans.append(match.span())
        joined = bool(_ABBREVIATION.search(match.group(0).rstrip()))
    return spans


def attribute(text: str, passages: dict[int, str]) -> tuple[str, list[int]]:
    """(the text with [n] added after sentences that repeat passage n, the
    numbers added in order). Code blocks are left alone."""
    if "```" in text:
        return text, []
    vocabulary = {n: _words(body) for n, body in passages.items()}
    added: list[int] = []
    pieces = []
    last = 0
    for begin, finish in _sentences(text):
        sentence = text[begin:finish]
        words = _words(sentence)
        best, share = None, 0.0
        if len(words) >= ATTRIBUTE_MIN_WORDS:
            for n, known in vocabulary.items():
                found = len(words & known) / len(words)
                if found > share:
                    best, share = n, found
        pieces.append(text[last:begin])
        if best is not None and share >= ATTRIBUTE_SHARE:
            stripped = sentence.rstrip()
            end = stripped[-1] if stripped[-1:] in ".!?" else ""
            body = stripped[: len(stripped) - len(end)] if end else stripped
            pieces.append(f"{body} [{best}]{end}{sentence[len(stripped) :]}")
            if best not in added:
                added.append(best)
        else:
            pieces.append(sentence)
        last = finish
    pieces.append(text[last:])
    return ("".join(pieces), added) if added else (text, [])


# Markdown a copied line may have gained or lost: list markers, emphasis.
_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|\*\*|__|`")
_CITATION = re.compile(r"\s*\[\d{1,3}\]")


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub("", _CITATION.sub("", text)).lower().split())


def copies_without_answering(
    text: str, question: str, passages: dict[int, tuple[str, str]]
) -> bool:
    """Is the answer only whole lines copied from the passages (citations,
    list markers and lead-ins ending in a colon aside), and do they and the
    headers of the passages they came from leave some of the question's
    words out? Asked "What is the hostel room number?", a small model pasted
    the passage that mentions the hostel, word for word: it read like an
    answer and said nothing the question asked. A pasted passage that holds
    every word of the question ("CGPA: 8.1" from Arjun's résumé for "What
    is Arjun's CGPA?") is an answer. `passages`: number → (header, text)."""
    lines = [line for line in (_plain(line) for line in text.split("\n")) if line]
    said = [line for line in lines if not line.endswith(":")]
    if not said:
        return False
    plain = {
        n: (header, {_plain(line) for line in body.split("\n")})
        for n, (header, body) in passages.items()
    }
    covered: set[str] = set()
    for line in said:
        sources = [header for header, lines in plain.values() if line in lines]
        if not sources:
            return False  # a line of its own: the model answered in words
        covered |= _words(line) | _words(" ".join(sources))
    return not _words(question) <= covered
