"""One health-memory entry read by meaning: its concept, its value in the concept's canonical
unit, and what is wrong with it or whose it is.

Example:
    >>> r = read_entry("lab", "Glucose, Serum", value=5.4, unit="mmol/L")
    >>> r.concept, round(r.value, 1), r.unit, r.flags
    ('glucose', 97.3, 'mg/dL', ())
    >>> read_entry("lab", "FBS", value=9000, unit="mg/dL").flags
    ('implausible',)
    >>> read_entry("condition", "Family history of type 2 diabetes").flags
    ('family',)
    >>> read_entry("medication", "Toprol XL").concept
    'metoprolol'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from assay.vocabulary import PHRASE_KINDS, vocabulary
from assay.vocabulary.context import assertion
from assay.vocabulary.values import canonical, check

FLAGS = ("unrecognised", "ambiguous", "unit", "implausible", "family", "negated", "not_current",
         "uncertain")


@dataclass(frozen=True)
class Reading:
    """What an entry means. ``value``/``unit``: in the concept's canonical unit when it
    converts, else as given. ``flags`` (in :data:`FLAGS` order): ``unrecognised`` (no concept),
    ``ambiguous`` (name and code disagree), ``unit`` or ``implausible`` (with ``problem``), and
    for conditions and medications ``family``, ``negated``, ``not_current`` or ``uncertain``
    (not the user's own, current one)."""

    kind: str
    name: str
    concept: str | None
    value: float | None = None
    unit: str | None = None
    flags: tuple[str, ...] = ()
    problem: str | None = None

    @property
    def is_users(self) -> bool:
        """The entry is the user's own, current condition or medicine (labs and wearables
        always are)."""
        return not {"family", "negated", "not_current", "uncertain"} & set(self.flags)


def read_entry(kind: str, name: str, *, value: float | None = None, unit: str = "",
               code: str | None = None, status: str | None = None) -> Reading:
    """Read one entry of ``kind`` (lab, wearable, condition, medication); see the module
    docstring."""
    return _read(vocabulary().version, kind, name, value, unit, code, status)


@functools.lru_cache(maxsize=65536)  # routing asks about the same entries for every leaf
def _read(version: str, kind: str, name: str, value: float | None, unit: str,
          code: str | None, status: str | None) -> Reading:
    table = vocabulary()
    ids = table.resolve(kind, name, code)
    flags: list[str] = []
    concept = next(iter(ids)) if len(ids) == 1 else None
    if not ids:
        flags.append("unrecognised")
    elif concept is None:
        flags.append("ambiguous")
    problem = None
    if kind not in PHRASE_KINDS and value is not None:
        found = check(table, kind, name, code, unit, [value])
        if found is not None:
            flags.append(found.kind)
            problem = found.message
    shown_value, shown_unit = value, (unit or None) if value is not None else None
    if concept is not None and value is not None and problem is None:
        moved = canonical(table, kind, concept, value, unit)
        if moved is not None:
            shown_value, shown_unit = moved
    if kind in PHRASE_KINDS:
        category = assertion(kind, name, status=status).category
        if category not in (None, "historical"):
            flags.append(category)
    order = {f: i for i, f in enumerate(FLAGS)}
    return Reading(kind, name, concept, shown_value, shown_unit,
                   tuple(sorted(flags, key=order.__getitem__)), problem)
