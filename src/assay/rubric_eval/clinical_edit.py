"""Does an edit of a reference answer change a clinical fact? The acceptance test of a near miss.

A near miss must break one clinical fact; an edit that only changes punctuation, a filler word
("the" → "this") or a synonym ("doctor" → "physician", "500 mg" → "0.5 g", "Tylenol" →
"paracetamol") breaks nothing, and a pair built on it measures nothing. :func:`clinical_change`
compares the sentence(s) the edit touches before and after, as concepts:

=================  ==========================================================================
kind               what differs
=================  ==========================================================================
``drug``           the ingredients named (brands and US/UK names map to one ingredient)
``negation``       the number of negation cues (not, no, never, without, avoid, ...)
``dose``           an amount with a dose unit (mass, volume, tablets, units, mg/kg), unit
                   conversions compared as quantities ("500 mg" = "0.5 g")
``frequency``      how often (every 6 hours, twice daily = 2 times a day, at night, as needed,
                   with food)
``duration``       how long (a number of time units without "every"; short, prolonged, ...)
``number``         any other value (temperature, pressure, lab value, age, percentage) or its
                   direction (above ↔ below, more ↔ less, increase ↔ decrease, high ↔ low,
                   positive ↔ negative, hypo- ↔ hyper-)
``modality``       the class of a modal (obligation should/must, permission may/can,
                   certainty, likelihood): should → must is a synonym, should → may is not
``contraindication`` safety, allergy, interaction, pregnancy, organ function, or who a
                   treatment is for (children ↔ adults)
``urgency``        immediately / emergency ↔ soon ↔ routinely
=================  ==========================================================================

The words are versioned data with their sources (``data/clinical_terms.yaml``). A change of
condition or symptom ("viral" → "bacterial") is not among the kinds: such an edit is rejected,
and the near-miss builder asks again or falls back to a rule that changes one of the above.

Example:
    >>> ref = "Give 15 mg/kg of paracetamol every 6 hours. Do not give aspirin to children."
    >>> clinical_change(ref, ref.index("15"), "15", "25").kind
    'dose'
    >>> clinical_change(ref, ref.index("paracetamol"), "paracetamol", "Tylenol").reason
    "changes no clinical fact (a synonym or rewording: 'paracetamol' -> 'Tylenol')"
    >>> clinical_change(ref, ref.index("children"), "children", "adults").kind
    'contraindication'
    >>> clinical_change(ref, ref.index("hours."), "hours.", "hours!").reason
    'changes no clinical fact (punctuation, case or spacing only)'
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

KINDS = ("drug", "negation", "dose", "frequency", "duration", "number", "modality",
         "contraindication", "urgency")
_DOSE_DIMENSIONS = ("mass", "volume", "dose_count", "amount", "dose_rate", "dose_rate_volume")
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[%<>≤≥]|°\s?[cf]\b|[a-zµμ][a-zµμ0-9_&]*(?:[-/][a-z0-9_]+)*"
                    r"|\S", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<!\d)[.!?](?=\s|$)|\n")


@dataclass(frozen=True)
class EditCheck:
    """The verdict on one edit: ``kind`` of clinical fact changed, or None and why not."""

    kind: str | None
    reason: str

    @property
    def changes_fact(self) -> bool:
        return self.kind is not None


@dataclass(frozen=True)
class _Terms:
    version: str
    numbers: dict[str, float]
    units: dict[str, tuple[str, float]]
    frequency_lead: frozenset[str]
    phrases: tuple[tuple[re.Pattern[str], str], ...]
    negation: frozenset[str]
    classes: dict[str, dict[str, str]]  # feature -> word -> class
    frequency: frozenset[str]
    duration: frozenset[str]
    filler: frozenset[str]
    drugs: dict[str, str]  # name -> ingredient
    drug_stems: tuple[str, ...]
    direction_prefixes: tuple[tuple[str, str], ...]


@cache
def terms() -> _Terms:
    """The shipped vocabulary (``data/clinical_terms.yaml``), read once."""
    import yaml

    raw: dict[str, Any] = yaml.safe_load(
        resources.files("assay.rubric_eval").joinpath("data/clinical_terms.yaml").read_text(
            encoding="utf-8"))

    def by_class(section: dict[str, list[str]]) -> dict[str, str]:
        return {str(w).lower(): name for name, words in section.items() for w in words}

    return _Terms(
        version=str(raw["version"]),
        numbers={k: float(v) for k, v in raw["number_words"].items()},
        units={str(k).lower(): (str(v[0]), float(v[1])) for k, v in raw["units"].items()},
        frequency_lead=frozenset(raw["frequency_lead"]),
        phrases=tuple((re.compile(p, re.IGNORECASE), r) for p, r in raw["phrases"].items()),
        negation=frozenset(raw["negation"]),
        classes={name: by_class(raw[name])
                 for name in ("modality", "urgency", "contraindication", "comparator")},
        frequency=frozenset(raw["frequency"]), duration=frozenset(raw["duration"]),
        filler=frozenset(raw["filler"]),
        drugs={str(n).lower(): ingredient for ingredient, names in raw["drugs"].items()
               for n in names},
        drug_stems=tuple(raw["drug_stems"]),
        direction_prefixes=tuple(raw["direction_prefixes"].items()))


def canonical_tokens(text: str) -> list[str]:
    """Lower-case tokens with synonyms rewritten (``twice daily`` → ``2 times per_day``,
    ``don't`` → ``do not``, number words → digits); punctuation dropped except ``% < >``.

    >>> canonical_tokens("Don't take it twice daily, only two tablets.")
    ['do', 'not', 'take', 'it', '2', 'times', 'per_day', 'only', '2', 'tablets']
    """
    vocab = terms()
    for pattern, replacement in vocab.phrases:
        text = pattern.sub(replacement, text)
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        token = raw.lower().replace(" ", "")
        if len(token) == 1 and not token.isalnum() and token not in "%<>≤≥µμ":
            continue
        if token in vocab.numbers:
            token = _number_text(vocab.numbers[token])
        out.append(token.replace(",", "") if token[0].isdigit() else token)
    return out


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def _is_number(token: str) -> bool:
    return token[:1].isdigit()


def _quantities(tokens: list[str]) -> Counter[tuple[str, float]]:
    """(kind, value in base units) of every number: ``dose``, ``frequency``, ``duration`` or
    ``number``; a range's lower end takes the unit of its upper end."""
    vocab = terms()
    out: Counter[tuple[str, float]] = Counter()
    urgent = vocab.classes["urgency"]
    for i, token in enumerate(tokens):
        if not _is_number(token) or token in urgent:  # 911 is an urgency, not a quantity
            continue
        value = float(token)
        unit_at = i + 1
        if unit_at + 1 < len(tokens) and tokens[unit_at] in ("to", "-", "or") \
                and _is_number(tokens[unit_at + 1]):
            unit_at += 2  # "2 to 3 tablets", "5-10 mg"
        unit = vocab.units.get(tokens[unit_at]) if unit_at < len(tokens) else None
        if unit is None:
            out[("number:none", value)] += 1
            continue
        dimension, scale = unit
        lead = tokens[i - 1] if i else ""
        if dimension in _DOSE_DIMENSIONS:
            kind = "dose"
        elif dimension == "times" or (dimension == "time" and lead in vocab.frequency_lead):
            kind = "frequency"
        elif dimension == "time":
            kind = "duration"
        else:
            kind = "number"
        out[(f"{kind}:{dimension}", round(value * scale, 9))] += 1
    return out


def drugs_in(tokens: list[str]) -> Counter[str]:
    """The ingredients named in canonical ``tokens`` (brands and US/UK names mapped to one
    ingredient; an unlisted word with a WHO INN stem counts as itself).

    >>> sorted(drugs_in(canonical_tokens("Tylenol or acetaminophen, then ciprofloxacin")))
    ['ciprofloxacin', 'paracetamol']
    """
    vocab = terms()
    found: Counter[str] = Counter()
    for token in tokens:
        if token in vocab.drugs:
            found[vocab.drugs[token]] += 1
        elif len(token) >= 7 and token.isalpha() and token.endswith(vocab.drug_stems):
            found[token] += 1
    return found


def _features(tokens: list[str]) -> dict[str, Counter[Any]]:
    """What each kind compares, for one side of the edit."""
    vocab = terms()
    quantities = _quantities(tokens)

    def classes(name: str) -> Counter[str]:
        table = vocab.classes[name]
        return Counter(table[t] for t in tokens if t in table)

    def of_kind(kind: str) -> Counter[Any]:
        return Counter({q: n for q, n in quantities.items() if q[0].startswith(kind + ":")})

    return {
        "drug": drugs_in(tokens),
        "negation": Counter({"cues": sum(t in vocab.negation for t in tokens)}),
        "dose": of_kind("dose"),
        "frequency": of_kind("frequency") + Counter(t for t in tokens if t in vocab.frequency),
        "duration": of_kind("duration") + Counter(t for t in tokens if t in vocab.duration),
        "number": of_kind("number") + classes("comparator") + _directions(tokens),
        "modality": classes("modality"),
        "contraindication": classes("contraindication"),
        "urgency": classes("urgency"),
    }


def _directions(tokens: list[str]) -> Counter[str]:
    """hyper-/tachy- words as "above", hypo-/brady- words as "below"."""
    found: Counter[str] = Counter()
    for token in tokens:
        for prefix, direction in terms().direction_prefixes:
            if token.startswith(prefix) and len(token) > len(prefix) + 3:
                found[direction] += 1
    return found


def _window(text: str, start: int, end: int) -> str:
    """The sentence(s) of ``text`` that overlap ``[start, end)``."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    left = max((e for e in ends if e <= start), default=0)
    right = min((e for e in ends if e >= max(end, start + 1)), default=len(text))
    return text[left:right]


def clinical_change(reference: str, offset: int, before: str, after: str) -> EditCheck:
    """Whether replacing ``before`` at ``offset`` of ``reference`` by ``after`` changes a
    clinical fact (see the module docstring)."""
    from assay.rubric_eval.perturb import apply_edit

    candidate = apply_edit(reference, before, after, offset)
    old = canonical_tokens(_window(reference, offset, offset + len(before)))
    new = canonical_tokens(_window(candidate, offset, offset + len(after)))
    if old == new:
        same_words = _words(reference[offset:offset + len(before)]) == _words(after)
        return EditCheck(None, "changes no clinical fact (" + (
            "punctuation, case or spacing only" if same_words else
            f"the same fact in other words: {before.strip()!r} -> {after.strip()!r}") + ")")
    a, b = _features(old), _features(new)
    for kind in KINDS:
        if a[kind] != b[kind]:
            return EditCheck(kind, f"changes a {kind}")
    removed, added = _changed(old, new)
    vocab = terms()
    if set(removed + added) <= vocab.filler:
        return EditCheck(None, f"changes no clinical fact (filler words only: "
                               f"{' '.join(removed) or '-'!r} -> {' '.join(added) or '-'!r})")
    return EditCheck(None, f"changes no clinical fact (a synonym or rewording: "
                           f"{before.strip()!r} -> {after.strip()!r})")


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _changed(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    from difflib import SequenceMatcher

    removed: list[str] = []
    added: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op != "equal":
            removed += old[i1:i2]
            added += new[j1:j2]
    return removed, added
