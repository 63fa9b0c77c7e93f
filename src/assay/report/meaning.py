"""What a verdict means for the answer, in the one set of words and colours that the report,
the review app and the terminal share.

Autorubric calls a met penalty DETECTED and an unmet one CLEAR; colour says what a reader needs
(good for the answer, missed, harmful, partly met, abstained, or no verdict at all):

>>> meaning("MET", 5.0), meaning("MET", -3.0), meaning("UNMET", -3.0), meaning("UNMET", 5.0)
('good', 'harmful', 'good', 'missed')
>>> meaning("CANNOT_ASSESS", 5.0), meaning(None, 5.0)
('abstained', 'failed')
>>> shown_label("MET", -3.0), shown_label("UNMET", -3.0), shown_label(None, 1.0)
('DETECTED', 'CLEAR', 'no verdict')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.verdict import Verdict

MEANINGS = ("good", "partial", "missed", "harmful", "abstained", "failed")


def meaning(label: str | None, weight: float, value: float | None = None) -> str:
    """What a final verdict means for the answer: good, partial, missed, harmful, abstained or
    failed (no verdict: every call failed or none was made). ``value`` is a multi-choice
    option's value in [0, 1], when the verdict is an option."""
    if label is None:
        return "failed"
    if label == "CANNOT_ASSESS":
        return "abstained"
    if value is None:
        met = label == "MET"
    elif 0.0 < value < 1.0:
        return "partial"
    else:
        met = value >= 1.0
    if weight < 0:
        return "harmful" if met else "good"
    return "good" if met else "missed"


def option_meaning(label: str | None, weight: float, values: Mapping[str, float]) -> str:
    """:func:`meaning` of a label of a criterion whose options have ``values`` (label → value,
    N/A options left out: an N/A label is an abstention); ``{}`` for a binary criterion.

    >>> option_meaning("partly", 2.0, {"fully": 1.0, "partly": 0.5}), option_meaning("n/a", 2.0, {"fully": 1.0})
    ('partial', 'abstained')
    """
    if values and label not in values and label not in (None, "CANNOT_ASSESS"):
        return "abstained"  # a multi-choice criterion's N/A option
    return meaning(label, weight, values.get(label) if label is not None else None)


def shown_label(label: str | None, weight: float) -> str:
    """The label a reader sees: a penalty's MET is DETECTED, its UNMET is CLEAR."""
    if label is None:
        return "no verdict"
    if weight < 0 and label in ("MET", "UNMET"):
        return "DETECTED" if label == "MET" else "CLEAR"
    return label


def verdict_label(verdict: Verdict) -> str:
    """A verdict's label as stored: its option for a multi-choice criterion, else its decision
    (MET, UNMET, CANNOT_ASSESS)."""
    return verdict.option if verdict.option is not None else str(verdict.decision)  # a StrEnum
