"""Which languages the library is written in, and whether the embedding model
suits them.

The default embedding model is English. On a German household's notes
(bench/corpora/german, docs/library.md "Multilingual by default") it found
the right note in the top 5 for 73% of German questions against 95% with the
multilingual model, and for 40% against 79% of the same questions asked in
English; on English notes the multilingual model costs 3-14 points. So the
default stays English and an admin whose library is mostly another language
is told so: in `kb doctor` and on the instance settings page in admin.

A passage's language is guessed from its most common short words (articles,
pronouns, conjunctions: every language here has a few dozen that make up a
large share of any text), or from its script for the languages the
multilingual model reads that are not written in Latin letters. A passage
with too few such words (a table, a list of names, code) counts as unknown.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from apps.library.index.embeddings import DEFAULT_MODEL, configured_name
from apps.library.models import Chunk

# A few dozen of each language's most frequent function words. Words two
# languages share ("de", "la", "en") count for both; the guess needs a clear lead.
COMMON_WORDS = {
    "en": "the a and of to is in that it for with as was on are be this by not or have from "
    "you at which but they we his her an were been has had will would there their what",
    "de": "der die das und ist nicht ich sie es ein eine zu den mit auf für von dem sich des "
    "auch wie wird bei oder wenn noch aus nach wir ihr man kann sind war hat einen nur",
    "fr": "le la les et est des une un du que pour dans pas qui sur avec au ce il sont par "
    "mais ou nous vous elle cette aux ne se plus leur être fait comme",
    "es": "el la los las y es que de en un una por con para no del se al lo como más pero "
    "sus está son este esta muy hay también porque cuando puede todo",
    "it": "il la che e di è un una per non con del della sono gli le si da nel anche come "
    "ma questo alla dei delle più nella essere ha questa quando",
    "nl": "de het een en van is dat niet op te voor met zijn ook als maar er bij wordt aan "
    "naar deze dit uit nog je wel kan heeft hij ze om dan",
    "pt": "o a os as e é que de em um uma para com não do da no na por mais se dos das ao "
    "mas ou também quando muito já está são pelo pela",
    "pl": "i w z na się nie to jest że do o jak ale co od po za tak czy są jego być przez "
    "dla już jeśli może tylko który która bardzo",
    "tr": "ve bir bu için ile de da çok daha gibi olarak ama ne var kadar sonra her olan "
    "değil ya mi ben sen biz onun şey",
}
_WORDS = {language: frozenset(words.split()) for language, words in COMMON_WORDS.items()}

# Scripts the multilingual model reads that are not Latin, by their Unicode blocks.
SCRIPTS = (
    ("ru", re.compile(r"[\u0400-\u04ff]")),  # Cyrillic
    ("ar", re.compile(r"[\u0600-\u06ff]")),  # Arabic
    ("th", re.compile(r"[\u0e00-\u0e7f]")),  # Thai
    ("ko", re.compile(r"[\uac00-\ud7af]")),  # Hangul
    ("ja", re.compile(r"[\u3040-\u30ff]")),  # kana (kanji alone reads as Chinese)
    ("zh", re.compile(r"[\u4e00-\u9fff]")),  # Han
)

NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "tr": "Turkish",
    "ru": "Russian",
    "ar": "Arabic",
    "th": "Thai",
    "ko": "Korean",
    "ja": "Japanese",
    "zh": "Chinese",
}

MIN_WORDS = 4  # common words a passage needs before its language is guessed
LEAD = 1.5  # the likeliest language's common words over the next one's
SAMPLE = 400  # passages read, spread evenly over the library
MIN_KNOWN = 20  # passages of a known language before any advice
ADVISE_SHARE = 0.25  # not-English share of those at which the admin is told
NAMED_SHARE = 0.05  # a language's share before the advice names it

_TOKEN = re.compile(r"[^\W\d_]+")


def passage_language(text: str) -> str | None:
    """The language `text` is most likely in, or None when it cannot tell."""
    letters = sum(1 for char in text if char.isalpha())
    for language, script in SCRIPTS:
        if letters and len(script.findall(text)) / letters > 0.3:
            return language
    hits = Counter()
    for word in _TOKEN.findall(text.lower()):
        for language, words in _WORDS.items():
            if word in words:
                hits[language] += 1
    ranked = hits.most_common(2)
    if not ranked or ranked[0][1] < MIN_WORDS:
        return None
    if len(ranked) > 1 and ranked[0][1] < LEAD * ranked[1][1]:
        return None
    return ranked[0][0]


def library_languages(sample: int = SAMPLE) -> Counter:
    """Passages per guessed language (None: unknown) over up to `sample`
    passages spread evenly across the whole library, everyone's."""
    ids = list(Chunk.objects.order_by("id").values_list("id", flat=True))
    step = max(1, len(ids) // sample)
    chosen = ids[::step][:sample]
    texts = Chunk.objects.filter(id__in=chosen).values_list("text", flat=True)
    return Counter(passage_language(text) for text in texts)


@dataclass(frozen=True)
class ModelAdvice:
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.problem} {self.fix[0].upper()}{self.fix[1:]}."


def embedding_model_advice() -> ModelAdvice | None:
    """What to tell the admin when the English default model embeds a
    library mostly written in another language; None when it suits it (or
    the admin chose a model, which is their call)."""
    if configured_name() != DEFAULT_MODEL:
        return None
    counts = library_languages()
    counts.pop(None, None)
    known = sum(counts.values())
    if known < MIN_KNOWN:
        return None
    others = [(language, n) for language, n in counts.most_common() if language != "en"]
    share = sum(n for _, n in others) / known
    if share < ADVISE_SHARE:
        return None
    # The languages that make up the share; a stray few (a borrowed phrase
    # read as Spanish in a German recipe) are left unnamed.
    named = [(language, n) for language, n in others if n / known >= NAMED_SHARE] or others[:1]
    shares = ", ".join(f"{NAMES[language]} {round(100 * n / known)}%" for language, n in named[:3])
    return ModelAdvice(
        problem=f"About {round(100 * share)}% of the library's passages are not in English "
        f"({shares}), and the English embedding model finds those poorly.",
        fix="choose “Universal Sentence Encoder multilingual v3” under Search: embedding "
        "model (Admin → Instance settings); the worker then re-embeds every passage, "
        "and search keeps working meanwhile",
    )
