"""Units and plausible values of lab and wearable entries, checked after conversion.

A value is compared with its analyte's plausible range (physiologically possible, not the
reference range) in the unit the range is written in: an entry in a listed unit is checked as it
is; one in another unit is first converted (:mod:`.units`: "Glucose 30 g/L" is 3,000 mg/dL, not
plausible). An entry whose name the vocabulary does not know is checked against every
analyte of its kind measured in a unit its own converts to: when its value is plausible for
none of them ("Zonulin 50000 mg/dL"), it is refused too, never silently accepted.

Example:
    >>> from assay.vocabulary import vocabulary
    >>> v = vocabulary()
    >>> check(v, "lab", "Glucose", None, "g/L", [30]).message
    'Glucose 30 g/L (3000 mg/dL) is not plausible (glucose in mg/dL: 10 to 1500)'
    >>> check(v, "lab", "Zonulin", None, "mg/dL", [50000]).kind
    'implausible'
    >>> value, unit = canonical(v, "lab", "hba1c", 53, "mmol/mol")
    >>> round(value, 2), unit
    (7.0, '%')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.vocabulary.units import convert, unit_key

if TYPE_CHECKING:
    from assay.vocabulary import Term, Vocabulary


@dataclass(frozen=True)
class Problem:
    """Why an entry's value cannot be right: ``kind`` is ``unit`` or ``implausible``."""

    kind: str
    message: str


def check(vocabulary: Vocabulary, kind: str, name: str, code: str | None, unit: str,
          values: Sequence[float]) -> Problem | None:
    """The first problem of entry ``name``'s ``values`` in ``unit`` (None when none). The unit
    alone is checked when ``values`` is empty.

    >>> from assay.vocabulary import vocabulary
    >>> check(vocabulary(), "lab", "HbA1c", None, "mg/dL", [7.9]).message
    "'mg/dL' is not a unit of hba1c: use %, mmol/mol"
    >>> check(vocabulary(), "lab", "FBS", None, "mg/dL", [9000]).message
    'FBS 9000 mg/dL is not plausible (glucose in mg/dL: 10 to 1500)'
    """
    ids = vocabulary.resolve(kind, name, code)
    if not ids:
        return _unknown(vocabulary, kind, name, unit, values)
    if len(ids) != 1:
        return None
    term = vocabulary.terms[kind][next(iter(ids))]
    if not term.units:
        return None
    in_range = _range_for(term, unit)
    if in_range is None:
        shown = ", ".join(u for u in term.units if u) or "no unit"
        if not unit:
            return Problem("unit", f"no unit given; {term.id} is recorded in {shown}")
        return Problem("unit", f"{unit!r} is not a unit of {term.id}: use {shown}")
    label, (low, high), to_range = in_range
    for value in values:
        moved = to_range(value)
        if not low <= moved <= high:
            shown_unit = f" {unit}" if unit else ""
            converted = "" if moved == value else f" ({moved:.4g} {label})"
            return Problem("implausible", f"{name} {value:g}{shown_unit}{converted} is not "
                           f"plausible ({term.id}{' in ' + label if label else ''}: {low:g} to "
                           f"{high:g})")
    return None


def canonical(vocabulary: Vocabulary, kind: str, term_id: str, value: float,
              unit: str) -> tuple[float, str] | None:
    """``value`` in the term's canonical unit (its first listed), or None when the unit does
    not convert to it."""
    term = vocabulary.terms.get(kind, {}).get(term_id)
    if term is None or term.canonical_unit is None:
        return None
    target = term.canonical_unit
    moved = convert(value, unit, target, molar_mass=term.molar_mass, affine=term.affine)
    return None if moved is None else (moved, target)


def _range_for(term: Term, unit: str):
    """(label, range, how to move a value into it) for the listed unit ``unit`` is, or the
    first listed one it converts to; None when it converts to none."""
    key = unit_key(unit)
    for label, bounds in term.units.items():
        if unit_key(label) == key:
            return label, bounds, lambda v: v
    for label, bounds in term.units.items():
        if convert(1.0, unit, label, molar_mass=term.molar_mass, affine=term.affine) is None:
            continue
        return label, bounds, lambda v, label=label: convert(
            v, unit, label, molar_mass=term.molar_mass, affine=term.affine)
    return None


def _unknown(vocabulary: Vocabulary, kind: str, name: str, unit: str,
             values: Sequence[float]) -> Problem | None:
    """An unrecognised name: implausible when no analyte of ``kind`` measured in a unit that
    ``unit`` converts to could have the value (no check when none is)."""
    if not values or not unit:
        return None
    candidates = [(term, _range_for(term, unit)) for term in vocabulary.terms.get(kind, {})
                  .values() if term.units]
    candidates = [(t, r) for t, r in candidates if r is not None]
    if not candidates:
        return None
    for value in values:
        if not any(low <= to_range(value) <= high
                   for _, (_, (low, high), to_range) in candidates):
            return Problem("implausible", f"{name!r} is not in the health vocabulary, and "
                           f"{value:g} {unit} is not plausible for any of the {len(candidates)} "
                           f"{kind} analytes measured in {unit} or a unit it converts to")
    return None
