"""The deterministic rules of near-miss building (seed 000 §5.3): target choice, the strict
minimal-edit check, and the rule fallbacks.

* :func:`select_target` picks the fact to break from the **gold** rubric (not from the rubric
  under test, which would favour it): the positive criterion with the highest
  ``points + 3·[axis = accuracy]``, the first on a tie.
* :func:`is_minimal_edit`: the perturbed answer must equal the reference with exactly the
  stated span replaced once (whitespace runs normalised), and differ from it.
* :func:`rule_fallback`: bump the first number that is not a list marker (integers +1,
  decimals +0.5), else flip the first modal verb (should ↔ should not, can ↔ cannot, ...).

Example:
    >>> from assay.rubric_eval.released import RubricEntry
    >>> gold = [RubricEntry(criterion="Asks age", axis="context_awareness", points=9),
    ...         RubricEntry(criterion="Dose 500 mg", axis="accuracy", points=7)]
    >>> select_target(gold)
    (2, 'Dose 500 mg')
    >>> is_minimal_edit("Take 2 tablets.", "Take 3 tablets.", "2 tablets", "3 tablets")
    True
    >>> rule_fallback("1. Rest.\\n2. Take 500 mg every 6 hours.")
    Edit(before='500', after='501', perturbed='1. Rest.\\n2. Take 501 mg every 6 hours.', error_type='numeric_threshold')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from assay.rubric_eval.released import RubricEntry

ACCURACY_BONUS = 3.0
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_LIST_MARKER = re.compile(r"^[ \t]*\d+[.)](?:\s|$)", re.MULTILINE)
_MODAL = re.compile(
    r"\b(should not|shouldn't|shouldn’t|should|must not|mustn't|mustn’t|must|cannot|can't|can’t"
    r"|can|may not|may|always|never)\b", re.IGNORECASE)
_FLIP = {
    "should not": "should", "shouldn't": "should", "shouldn’t": "should", "should": "should not",
    "must not": "must", "mustn't": "must", "mustn’t": "must", "must": "must not",
    "cannot": "can", "can't": "can", "can’t": "can", "can": "cannot",
    "may not": "may", "may": "may not", "always": "never", "never": "always",
}


class Edit(NamedTuple):
    before: str
    after: str
    perturbed: str
    error_type: str


def target_score(entry: RubricEntry) -> float:
    """``points + 3`` for an accuracy criterion, ``points`` otherwise."""
    return entry.points + (ACCURACY_BONUS if entry.axis.strip().lower() == "accuracy" else 0.0)


def select_target(gold: Sequence[RubricEntry]) -> tuple[int, str]:
    """(1-based number, text) of the gold criterion to violate (see the module docstring).

    Only positive criteria are candidates (a near miss breaks something the answer should do);
    a rubric without one falls back to all its criteria.
    """
    if not gold:
        raise ValueError("an empty gold rubric has no target")
    pool = [(i, e) for i, e in enumerate(gold, start=1) if e.points > 0] or list(
        enumerate(gold, start=1))
    best_i, best = pool[0]
    for i, entry in pool[1:]:
        if target_score(entry) > target_score(best):
            best_i, best = i, entry
    return best_i, best.criterion


def normalise_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def is_minimal_edit(reference: str, perturbed: str, before: str, after: str) -> bool:
    """True when ``perturbed`` is ``reference`` with the first ``before`` replaced by ``after``."""
    if not before or not after or before == after or before not in reference:
        return False
    expected = normalise_ws(reference.replace(before, after, 1))
    return expected == normalise_ws(perturbed) and expected != normalise_ws(reference)


def _bump(number: str) -> str:
    if "." in number:
        return f"{round(float(number) + 0.5, 2):.2f}".rstrip("0").rstrip(".")
    return str(int(number) + 1)


def number_bump(reference: str) -> Edit | None:
    """The first number that is not a list marker, integers +1 and decimals +0.5."""
    markers = {m.end() for m in _LIST_MARKER.finditer(reference)}
    for match in _NUMBER.finditer(reference):
        after_digits = match.end()
        if any(after_digits < end <= after_digits + 2 for end in markers):
            continue
        before, after = match.group(0), _bump(match.group(0))
        perturbed = reference[:match.start()] + after + reference[match.end():]
        return Edit(before, after, perturbed, "numeric_threshold")
    return None


def modal_flip(reference: str) -> Edit | None:
    """The first modal verb flipped (should ↔ should not, can ↔ cannot, always ↔ never, ...)."""
    match = _MODAL.search(reference)
    if match is None:
        return None
    before = match.group(0)
    after = _FLIP[before.lower()]
    if before[0].isupper():
        after = after[0].upper() + after[1:]
    perturbed = reference[:match.start()] + after + reference[match.end():]
    return Edit(before, after, perturbed, "modality_flip")


def rule_fallback(reference: str) -> Edit | None:
    """A number bump, else a modal flip, else None (no rule applies)."""
    return number_bump(reference) or modal_flip(reference)
