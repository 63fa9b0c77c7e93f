"""Word tokens for lexical retrieval and overlap: lower-case, stop words out, plurals folded.

One tokenizer serves the BM25 index, its queries, and the overlap that ties an atomic fact back
to the chunk it came from, so all three agree on what a word is.

Example:
    >>> tokens("The headaches of children, and their fevers!")
    ['headach', 'children', 'fever']
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves may might must shall
also get gets got let lets much many via per
""".split())  # noqa: SIM905  a readable block of words


def fold(word: str) -> str:
    """A light English stemmer: a plural -s (-ies to -y) and then a final -e are dropped, so
    that "doses", "dose" and "dosing" do not all agree but "headaches" and "headache" do."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def tokens(text: str) -> list[str]:
    """Content words of ``text`` in order (duplicates kept)."""
    return [fold(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def overlap(needle: str, haystack_tokens: set[str]) -> float:
    """Share of ``needle``'s distinct content words found in ``haystack_tokens`` (0 if none)."""
    words = set(tokens(needle))
    return len(words & haystack_tokens) / len(words) if words else 0.0


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the content-word sets of two texts."""
    x, y = set(tokens(a)), set(tokens(b))
    return len(x & y) / len(x | y) if x | y else 1.0
