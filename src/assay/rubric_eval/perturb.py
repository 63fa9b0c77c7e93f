"""The deterministic rules of near-miss building (seed 000 §5.3): target choice, the strict
minimal-edit check, the span bound, and the rule fallbacks.

* :func:`select_target` picks the fact to break from the **gold** rubric (not from the rubric
  under test, which would favour it): the positive criterion with the highest
  ``points + 3·[axis = accuracy]``, the first on a tie.
* :func:`locate_edit`: the perturbed answer must equal the reference with exactly the
  stated span replaced at one of its occurrences (whitespace runs normalised), and differ from
  it; the occurrence's character offset is the edit's ``edit_offset``, so a pair can always be
  rebuilt from its record (the second "can" of thirteen is not the first).
* :class:`SpanBound`: the removed span and the inserted text are each at most ``max_chars``
  characters and ``max_share`` of the reference, so a "span" is never the whole answer and
  never a new paragraph. The candidate stored is the reference with that span replaced at its
  offset, built here, never the model's text (:func:`apply_edit`).
* :func:`rule_fallback`: in the reference sentence closest to the target (content words in
  common; then the others in order), bump a clinical number, one with a dose, volume, time
  or measurement unit (integers +1, decimals +0.5; never a percentage, a list marker or part
  of a name such as ICD-10 or COVID-19), else flip a modal verb or negation (should ↔ should
  not, do not → do, avoid → consider, ...). :attr:`Edit.rule` names the rule that fired.

Example:
    >>> from assay.rubric_eval.released import RubricEntry
    >>> gold = [RubricEntry(criterion="Asks age", axis="context_awareness", points=9),
    ...         RubricEntry(criterion="Dose 500 mg", axis="accuracy", points=7)]
    >>> select_target(gold)
    (2, 'Dose 500 mg')
    >>> locate_edit("Take 2 tablets, then 2 more.", "Take 2 tablets, then 3 more.", "2", "3")
    21
    >>> rule_fallback("1. Rest.\\n2. Take 500 mg every 6 hours.")
    Edit(before='500', after='501', perturbed='1. Rest.\\n2. Take 501 mg every 6 hours.', error_type='numeric_threshold', rule='number_bump:mg', offset=17)
    >>> rule_fallback("Coded as ICD-10 R50.9 in 100% of cases; do not give aspirin.").rule
    'negation_flip'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from assay.rubric_eval.released import RubricEntry

ACCURACY_BONUS = 3.0
MAX_SPAN_CHARS = 160
MAX_SPAN_SHARE = 0.25
# Units that make a number a clinical fact: dose, volume, count of doses, time and frequency,
# temperature, pressure, lab values. A percentage is left alone ("100%" -> "101%" breaks
# nothing), and so is a number inside a name (ICD-10, COVID-19, B12: preceded by a letter,
# a hyphen or a dot).
_UNIT = (r"(?:mg/kg|mg/dL|mmol/L|mg|mcg|µg|μg|g|kg|ml|mL|l|L|litres?|liters?|units?|IU|"
         r"tablets?|capsules?|puffs?|drops?|doses?|sachets?|times?|hours?|hrs?|h|minutes?|"
         r"mins?|days?|weeks?|months?|years?|°\s?[CF]|degrees?|C|F|mmHg|bpm|kcal)")
_CLINICAL_NUMBER = re.compile(
    rf"(?<![\w.\-/])\d+(?:\.\d+)?(?=(?:\s?(?:-|–|to)\s?\d+(?:\.\d+)?)?\s?{_UNIT}(?![\w%]))")
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_MODAL = re.compile(
    r"\b(should not|shouldn't|shouldn’t|should|must not|mustn't|mustn’t|must|cannot|can't|can’t"
    r"|can|may not|may|always|never|do not|don't|don’t|avoid)\b", re.IGNORECASE)
_FLIP = {
    "should not": "should", "shouldn't": "should", "shouldn’t": "should", "should": "should not",
    "must not": "must", "mustn't": "must", "mustn’t": "must", "must": "must not",
    "cannot": "can", "can't": "can", "can’t": "can", "can": "cannot",
    "may not": "may", "may": "may not", "always": "never", "never": "always",
    "do not": "do", "don't": "do", "don’t": "do", "avoid": "consider",
}
_NEGATIONS = ("do not", "don't", "don’t", "avoid")


class Edit(NamedTuple):
    before: str
    after: str
    perturbed: str
    error_type: str
    rule: str = ""
    offset: int = 0  # where ``before`` starts in the reference


class SpanBound(NamedTuple):
    """How large the one edit may be: the removed span and the inserted text are each at most
    ``max_chars`` characters and ``max_share`` of the reference's characters.

    >>> SpanBound().admits("Take 500 mg every 6 hours, with food.", "500 mg", "50 mg")
    True
    >>> SpanBound().admits("Rest and drink water.", "Rest and drink water.", "Sleep.")
    False
    >>> SpanBound().admits("Rest and drink water.", "water", "water and take 2 g of aspirin")
    False
    """

    max_chars: int = MAX_SPAN_CHARS
    max_share: float = MAX_SPAN_SHARE

    def admits(self, reference: str, before: str, after: str) -> bool:
        longest = max(len(before), len(after))
        return longest <= self.max_chars and longest <= self.max_share * len(reference)


def apply_edit(reference: str, before: str, after: str, offset: int) -> str:
    """The reference with ``before`` at ``offset`` replaced by ``after``: the candidate of a
    near-miss pair, built rather than taken from the model."""
    if reference[offset:offset + len(before)] != before:
        raise ValueError(f"{before!r} is not at offset {offset} of the reference")
    return reference[:offset] + after + reference[offset + len(before):]


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


def locate_edit(reference: str, perturbed: str, before: str, after: str) -> int | None:
    """The offset of the occurrence of ``before`` whose replacement by ``after`` turns
    ``reference`` into ``perturbed`` (whitespace runs normalised), the first such; None when
    no single replacement does, or it changes nothing."""
    if not before or not after or before == after:
        return None
    target = normalise_ws(perturbed)
    if target == normalise_ws(reference):
        return None
    offset = reference.find(before)
    while offset >= 0:
        if normalise_ws(apply_edit(reference, before, after, offset)) == target:
            return offset
        offset = reference.find(before, offset + 1)
    return None


def is_minimal_edit(reference: str, perturbed: str, before: str, after: str) -> bool:
    """True when ``perturbed`` is ``reference`` with one occurrence of ``before`` replaced by
    ``after`` (:func:`locate_edit` finds which)."""
    return locate_edit(reference, perturbed, before, after) is not None


def _bump(number: str) -> str:
    if "." in number:
        return f"{round(float(number) + 0.5, 2):.2f}".rstrip("0").rstrip(".")
    return str(int(number) + 1)


def number_bump(reference: str, start: int = 0, end: int | None = None) -> Edit | None:
    """The first clinical number in ``reference[start:end]`` (see the module docstring),
    integers +1 and decimals +0.5."""
    for match in _CLINICAL_NUMBER.finditer(reference, start, len(reference) if end is None
                                           else end):
        before, after = match.group(0), _bump(match.group(0))
        unit = re.match(rf"(?:\s?(?:-|–|to)\s?\d+(?:\.\d+)?)?\s?({_UNIT})",
                        reference[match.end():])
        perturbed = reference[:match.start()] + after + reference[match.end():]
        return Edit(before, after, perturbed, "numeric_threshold",
                    f"number_bump:{unit.group(1) if unit else ''}", match.start())
    return None


def modal_flip(reference: str, start: int = 0, end: int | None = None) -> Edit | None:
    """The first modal verb or negation in ``reference[start:end]`` flipped (should ↔ should
    not, can ↔ cannot, always ↔ never, do not → do, avoid → consider, ...)."""
    match = _MODAL.search(reference, start, len(reference) if end is None else end)
    if match is None:
        return None
    before = match.group(0)
    after = _FLIP[before.lower()]
    if before[0].isupper():
        after = after[0].upper() + after[1:]
    perturbed = reference[:match.start()] + after + reference[match.end():]
    rule = "negation_flip" if before.lower() in _NEGATIONS else "modal_flip"
    return Edit(before, after, perturbed, "modality_flip", rule, match.start())


def _sentences_by_target(reference: str, target: str) -> list[tuple[int, int]]:
    """The reference's sentence spans, the one sharing most content words with ``target``
    first (ties and no target: in order)."""
    from assay.evidence.tokens import overlap, tokens

    words = set(tokens(target))
    spans = [(m.start(), m.end()) for m in _SENTENCE.finditer(reference) if m.group(0).strip()]
    return sorted(spans, key=lambda s: -overlap(reference[s[0]:s[1]], words) if words else 0.0)


def rule_fallback(reference: str, target: str = "") -> Edit | None:
    """In the sentence closest to ``target`` first, a clinical number bump, else a modal or
    negation flip; else the next sentence; None if no rule applies anywhere."""
    for start, end in _sentences_by_target(reference, target):
        edit = number_bump(reference, start, end) or modal_flip(reference, start, end)
        if edit is not None:
            return edit
    return None
