"""Matching the sentences a judge echoes back to the answer's own sentences (seed 002 §3.1).

CF's two calls name sentences by their text: Listing 2 returns the categories as lists of
sentence strings, Listing 1 repeats each statement before its verdict. Real models do not echo
byte for byte: they drop a final full stop, write curly apostrophes and quotes, change the
spacing, swap hyphens for dashes, or number the statements. Matching is therefore done in
tiers, the first tier that finds a sentence wins:

1. ``strict``: case and runs of whitespace ignored (what a careful echo gives);
2. ``loose``: Unicode compatibility forms folded (NFKC), then only letters and digits compared,
   so punctuation, quote style, dashes and spacing do not matter;
3. ``loose`` after dropping a leading enumerator ("1. ", "Statement 2: "), as Listing 1's
   numbered format invites.

Words must still be the same words in the same order: a paraphrase is not matched, and is
reported by the caller rather than guessed.

Example:
    >>> loose_key("It’s fine — just  don't rub it") == loose_key("it's fine - just don't rub it.")
    True
    >>> match(["Sure.", "It's fine to shower."], ["sure", "It’s fine to shower"])
    [[0], [1]]
    >>> match(["Yes.", "Yes?"], ["Yes?"])  # the strict tier tells them apart
    [[1]]
    >>> match(["Wait a week."], ["Wait two weeks."])
    [[]]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_ENUMERATOR = re.compile(r"^\s*(?:statement\s*)?\(?\d{1,3}\s*[.):\-]\s*", re.IGNORECASE)


def strict_key(text: str) -> str:
    """``text`` with case and runs of whitespace ignored."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def loose_key(text: str) -> str:
    """Only the letters and digits of ``text`` (NFKC-folded, case-folded), in order."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def _unnumbered_key(text: str) -> str:
    return loose_key(_ENUMERATOR.sub("", text, count=1))


_TIERS = (strict_key, loose_key)


def match(sentences: Sequence[str], echoes: Sequence[str]) -> list[list[int]]:
    """For each echoed string, the indices of the sentences it names ([] when none).

    An echo names every sentence with its key in the first tier where any sentence has it (an
    answer that repeats a sentence has the repeat named too). An empty key never matches.
    """
    tiers = [*_TIERS, _unnumbered_key]
    keyed = [[key(s) for s in sentences] for key in tiers]
    out = []
    for echo in echoes:
        found: list[int] = []
        for key, keys in zip(tiers, keyed):
            wanted = key(echo)
            found = [i for i, k in enumerate(keys) if wanted and k == wanted]
            if found:
                break
        out.append(found)
    return out


def match_in_order(sentences: Sequence[str], echoes: Sequence[str]) -> list[int | None]:
    """For each echo, the one sentence it stands for, each sentence claimed at most once.

    For one-to-one replies (a verdict per statement): an echo takes the first sentence of its
    :func:`match` it names that no earlier echo took, so two verdicts on a repeated sentence go
    to its two occurrences. None: the echo names no sentence, or none left.

    >>> match_in_order(["Use drops.", "Rest.", "Use drops."], ["rest", "use drops", "use drops",
    ...                                                        "use drops"])
    [1, 0, 2, None]
    """
    taken: set[int] = set()
    out: list[int | None] = []
    for found in match(sentences, echoes):
        free = next((i for i in found if i not in taken), None)
        if free is not None:
            taken.add(free)
        out.append(free)
    return out
