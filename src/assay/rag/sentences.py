"""Splitting answers into sentences, for Conversational Faithfulness (seed 002 §3.1, step 1).

CF scores the answer's own sentences, so the splitter matters: it must keep clinical
abbreviations ("500 mg. of", "every 4 hrs. e.g. after meals", "Dr. Patel", "Vit. D") inside
their sentence, and cope with spoken text that has no final full stop. pySBD (rule-based,
"Golden Rules" tested, no model to download) does the splitting; its English abbreviation list
is extended here with dose, time and clinical abbreviations it does not know, because stock
pySBD splits "Take 500 mg. of paracetamol" after "mg.".

Example:
    >>> split_sentences("Sure. Take 500 mg. of paracetamol every 4 hrs. e.g. after meals. "
    ...                 "Dr. Patel will call you. Anything else?")
    ['Sure.', 'Take 500 mg. of paracetamol every 4 hrs. e.g. after meals.', 'Dr. Patel will call you.', 'Anything else?']
    >>> split_sentences("Thank you for telling me. I'm sorry it is sore. Is it ok. I see.")
    ['Thank you for telling me.', "I'm sorry it is sore.", 'Is it ok.', 'I see.']
    >>> split_sentences("yes that would be ok")
    ['yes that would be ok']
"""

from __future__ import annotations

from functools import lru_cache

CLINICAL_ABBREVIATIONS = (
    "mg", "mcg", "ml", "mls", "kg", "g", "iu", "mmol", "hr", "hrs", "min", "mins", "sec", "wk",
    "wks", "mth", "mths", "yr", "yrs", "tab", "tabs", "cap", "caps", "inj", "approx", "vit",
    "tsp", "tbsp", "oz", "lb", "lbs", "tel", "dept", "ref", "amp", "soln", "susp", "oint",
    "gtt", "gtts", "resp", "temp", "max", "wt", "ht", "pt", "pts", "dx", "rx", "hx", "tx",
)
"""Abbreviations a sentence does not end on when a lower-case word or a number follows."""

CLINICAL_PREPOSITIVE = ("vit", "nurse", "sr", "sis")
"""Abbreviations that always precede what they qualify ("Vit. D", "Sr. Jones")."""

EVERYDAY_WORDS = ("me", "is", "ok", "may", "miss", "wash", "ill", "id", "man", "mass", "con",
                  "col", "ind", "mo", "pa", "la", "ga", "va", "ken", "cal", "del", "op", "ore",
                  "ord", "res", "ver", "mar", "rs", "ut", "pl", "fed", "exp", "ens", "ing", "ok")
"""Entries of pySBD's list (mostly US state codes) that are everyday words in a conversation:
"Thank you for telling me. I'm ..." must split after "me.", so they are not abbreviations here."""


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd
    from pysbd.lang.english import English

    class ClinicalEnglish(English):
        class Abbreviation(English.Abbreviation):
            ABBREVIATIONS = sorted((set(English.Abbreviation.ABBREVIATIONS)
                                    | set(CLINICAL_ABBREVIATIONS)) - set(EVERYDAY_WORDS))
            PREPOSITIVE_ABBREVIATIONS = sorted(set(English.Abbreviation.PREPOSITIVE_ABBREVIATIONS)
                                               | set(CLINICAL_PREPOSITIVE))

    segmenter = pysbd.Segmenter(language="en", clean=False)
    segmenter.language_module = ClinicalEnglish
    return segmenter


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones dropped, in order."""
    if not text.strip():
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]
