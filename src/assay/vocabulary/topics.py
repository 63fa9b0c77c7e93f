"""Clinical topics of a query and of health-memory entries (``topics.yaml``).

A query is on a topic when it uses one of the topic's words ("sugar", "bedtime") or names one of
its concepts ("my Lantus", "LDL"); an entry is on the topics its concept belongs to. The stress
tests use them to find the entries a generic ``lab`` leaf needs for a query and to draw unsafe
instructions that bear on the query.

Example:
    >>> sorted(query_topics("Should I take my Lantus at bedtime if my sugar is 110?"))
    ['glycaemia']
    >>> sorted(concepts_in("My LDL is 168 and I take Lipitor"))
    [('lab', 'ldl'), ('medication', 'atorvastatin')]
    >>> sorted(topics_of("medication", "atorvastatin"))
    ['lipids']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.vocabulary import KINDS, vocabulary, words

TOPICS = Path(__file__).parent / "topics.yaml"
_MIN_LETTERS = 3  # "k", "hr", "dm" are names, but too short to find in free text


@dataclass(frozen=True)
class Topic:
    id: str
    members: frozenset[tuple[str, str]]
    words: frozenset[str]


@functools.lru_cache(maxsize=1)
def topics() -> dict[str, Topic]:
    """The shipped topics by id."""
    import yaml

    data: dict[str, Any] = yaml.safe_load(TOPICS.read_text(encoding="utf-8"))
    out = {}
    for topic_id, body in data["topics"].items():
        members = frozenset(tuple(m.split(":", 1)) for m in body["members"])
        out[topic_id] = Topic(topic_id, members, frozenset(w.casefold() for w in body["words"]))
    return out


def topics_of(kind: str, term_id: str) -> set[str]:
    """The topics a concept belongs to (a member's narrower terms belong too)."""
    table = vocabulary()
    return {t.id for t in topics().values() for k, member in t.members
            if k == kind and term_id in table.narrower(kind, member)}


def concepts_in(text: str) -> set[tuple[str, str]]:
    """The (kind, term) concepts named in free text as whole words (names of at least three
    characters; the longest wins where two overlap)."""
    tokens = words(text)
    found: list[tuple[int, int, str, str]] = []
    for kind, term_id, phrase in _phrases(vocabulary().version):
        n = len(phrase)
        found += [(i, i + n, kind, term_id) for i in range(len(tokens) - n + 1)
                  if tokens[i:i + n] == phrase]
    return {(kind, term) for start, end, kind, term in found if not any(
        s <= start and end <= e and (e - s) > (end - start) for s, e, _, _ in found)}


def query_topics(text: str) -> set[str]:
    """The topics of a query: by its words and by the concepts it names."""
    tokens = set(words(text))
    out = {t.id for t in topics().values() if t.words & tokens}
    for kind, term in concepts_in(text):
        out |= topics_of(kind, term)
    return out


@functools.lru_cache(maxsize=4)
def _phrases(version: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Every name of every term as a phrase (per vocabulary version: a user file adds names)."""
    table = vocabulary()
    out = []
    for kind in KINDS:
        for term in table.terms.get(kind, {}).values():
            for name in (term.id, *term.names):
                phrase = words(name)
                if sum(len(w) for w in phrase) >= _MIN_LETTERS:
                    out.append((kind, term.id, phrase))
    return tuple(out)
