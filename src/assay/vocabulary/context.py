"""Whose, and whether: negation and experiencer of condition and medication entries (ConText).

A memory entry "Family history of type 2 diabetes" names type 2 diabetes, but not the user's; "No
history of hypertension", "Atrial fibrillation - ruled out" and "Denies asthma" name conditions
the user does not have; "Stopped metformin" and "Allergic to penicillin" medicines the user does
not take. :func:`assertion` reads an entry's text (and its status, e.g. FHIR's ``refuted`` or
``stopped``) with the trigger rules of ``context-rules.yaml`` (NegEx/ConText triggers from
medspaCy's published English rules, plus health-app phrasing) and says which of ``family``,
``negated``, ``not_current``, ``uncertain`` or ``historical`` applies. Only an entry with none of
the first four is the user's own: a historical one ("History of hypertension") still is.

A trigger reaches the concept in its direction only (``forward``: "no diabetes"; ``backward``:
"diabetes ruled out"), and never past a terminator ("but", "however"): "Type 2 diabetes without
complications" is the user's diabetes.

Example:
    >>> assertion("condition", "Family history of type 2 diabetes").category
    'family'
    >>> assertion("condition", "Type 2 diabetes mellitus without complications").is_users
    True
    >>> assertion("condition", "Sleep apnea", status="refuted").category
    'negated'
    >>> assertion("medication", "Stopped metformin").category
    'not_current'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RULES = Path(__file__).parent / "context-rules.yaml"
NOT_THE_USERS = ("family", "negated", "not_current", "uncertain")


@dataclass(frozen=True)
class Assertion:
    """What the rules found: ``category`` (None: affirmed) and the ``trigger`` that said so."""

    category: str | None = None
    trigger: str | None = None

    @property
    def is_users(self) -> bool:
        """The user's own, current (or historical) condition or medicine."""
        return self.category not in NOT_THE_USERS


@dataclass(frozen=True)
class _Rule:
    category: str
    direction: str
    kinds: frozenset[str]
    phrase: tuple[str, ...]


@dataclass(frozen=True)
class _Rules:
    version: str
    order: tuple[str, ...]
    rules: tuple[_Rule, ...]
    terminators: tuple[tuple[str, ...], ...]
    statuses: dict[str, str]
    by_first: dict[str, tuple[_Rule, ...]]


def assertion(kind: str, text: str, *, status: str | None = None,
              span: tuple[int, int] | None = None) -> Assertion:
    """The assertion of an entry of ``kind`` named ``text`` (see the module docstring).
    ``span``: the concept's word positions in ``text`` (as :func:`assay.vocabulary.words`
    splits it); by default the first term the vocabulary finds there, else every word no
    trigger covers."""
    from assay.vocabulary import vocabulary

    if span is None:
        hits = vocabulary().find(kind, text)
        span = (hits[0].start, hits[0].end) if hits else None
    return _assertion(kind, text, status, span)


@functools.lru_cache(maxsize=16384)  # the same entries are read for every leaf of a taxonomy
def _assertion(kind: str, text: str, status: str | None,
               span: tuple[int, int] | None) -> Assertion:
    from assay.vocabulary import words

    rules = _rules()
    found: list[tuple[str, str]] = []
    if status:
        category = rules.statuses.get(" ".join(words(status)))
        if category is not None:
            found.append((category, status))
    tokens = words(text)
    found += _triggered(rules, kind, tokens, span)
    if not found:
        return Assertion()
    category, trigger = min(found, key=lambda f: rules.order.index(f[0]))
    return Assertion(category, trigger)


def _triggered(rules: _Rules, kind: str, tokens: tuple[str, ...],
               span: tuple[int, int] | None) -> list[tuple[str, str]]:
    hits = [(i, i + len(rule.phrase), rule) for i, token in enumerate(tokens)
            for rule in rules.by_first.get(token, ())
            if kind in rule.kinds and tokens[i:i + len(rule.phrase)] == rule.phrase]
    covered = {i for start, end, _ in hits for i in range(start, end)}
    concept = (set(range(*span)) if span is not None
               else set(range(len(tokens))) - covered)
    if not concept:
        return []
    stops = sorted({i for t in rules.terminators for i in _find(tokens, t)})
    out = []
    for start, end, rule in hits:
        before = max((s for s in stops if s < start), default=-1)
        after = min((s for s in stops if s >= end), default=len(tokens))
        reach_forward = {i for i in concept if end <= i < after}
        reach_backward = {i for i in concept if before < i < start}
        if (rule.direction in ("forward", "both") and reach_forward) or (
                rule.direction in ("backward", "both") and reach_backward):
            out.append((rule.category, " ".join(rule.phrase)))
    return out


def _find(tokens: tuple[str, ...], phrase: tuple[str, ...]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(tokens) - n + 1) if tokens[i:i + n] == phrase] if n else []


@functools.lru_cache(maxsize=1)
def _rules() -> _Rules:
    import yaml

    from assay.vocabulary import words

    data: dict[str, Any] = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    rules = tuple(_Rule(r["category"], r["direction"], frozenset(r["kinds"]), words(p))
                  for r in data["rules"] for p in r["phrases"])
    statuses = {" ".join(words(s)): category for category, listed in data["statuses"].items()
                for s in listed}
    by_first: dict[str, list[_Rule]] = {}
    for rule in rules:
        by_first.setdefault(rule.phrase[0], []).append(rule)
    return _Rules(str(data["version"]), tuple(data["categories"]), rules,
                  tuple(words(t) for t in data["terminators"]), statuses,
                  {k: tuple(v) for k, v in by_first.items()})


def rules_version() -> str:
    """The version of the shipped rules (routings record it with the vocabulary's)."""
    return _rules().version
