"""The health vocabulary: names, abbreviations, LOINC codes, units and plausible values.

A taxonomy leaf's ``requires`` (``lab:hba1c``, ``wearable:hrv``) names a term; a health
memory entry meets it when the entry's name (or a part of it in parentheses: ``Glycated
hemoglobin (HbA1c)``), or a lab's ``loinc`` code, is one of the term's. Lab and wearable names
match whole (``glycated hemoglobin`` is HbA1c, not hemoglobin; ``heart rate variability`` is not
``heart rate``); a condition or medication matches when one of the term's names appears in it as
whole words (``type 2 diabetes`` is diabetes, ``prediabetes`` is not). A term may include
narrower ones (``wearable:sleep`` is met by deep-sleep minutes). A requirement naming no term
matches an entry of exactly that name.

The shipped table is ``health-vocabulary.yaml`` (versioned); a user's files in the same format,
named by ``$ASSAY_HEALTH_VOCABULARY`` (several joined by the path separator) or ``assay
--health-vocabulary FILE``, add terms, names, codes and units on top.

Example:
    >>> v = vocabulary()
    >>> v.matches("lab", "hba1c", "Glycated hemoglobin"), v.matches("lab", "hemoglobin",
    ...     "Glycated hemoglobin"), v.matches("lab", "creatinine", "Serum creatinine")
    (True, False, True)
    >>> v.matches("wearable", "resting heart rate", "RHR"), v.matches("wearable", "hrv",
    ...     "heart rate"), v.matches("wearable", "sleep", "deep sleep")
    (True, False, True)
    >>> v.matches("condition", "diabetes", "type 2 diabetes"), v.matches("condition",
    ...     "diabetes", "prediabetes")
    (True, False)
    >>> v.value_problem("lab", "HbA1c", None, "mg/dL", [7.9])
    "'mg/dL' is not a unit of hba1c: use %, mmol/mol"
    >>> v.value_problem("lab", "HbA1c", None, "%", [79])
    'HbA1c 79 % is not plausible (hba1c in %: 3 to 20)'
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import InputError, Issue

VOCABULARY_ENV = "ASSAY_HEALTH_VOCABULARY"
SHIPPED = Path(__file__).parent / "health-vocabulary.yaml"
KINDS = ("lab", "wearable", "condition", "medication")
PHRASE_KINDS = ("condition", "medication")  # qualified in free text: "type 2 diabetes"
_LOINC = re.compile(r"^\d{1,7}-\d$")


class Term(BaseModel):
    """One analyte, metric, condition or medication and every name it goes by."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    names: list[str] = Field(default_factory=list)
    loinc: list[str] = Field(default_factory=list)
    units: dict[str, tuple[float, float]] = Field(default_factory=dict)
    includes: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _no_colon(cls, value: str) -> str:
        if ":" in value:
            raise ValueError("a term id holds no ':' (requirements read kind:id:qualifier)")
        return value

    @field_validator("loinc")
    @classmethod
    def _loinc_codes(cls, codes: list[str]) -> list[str]:
        bad = [c for c in codes if not _LOINC.match(c)]
        if bad:
            raise ValueError(f"not LOINC codes (NNNNN-N): {bad}")
        return codes

    @field_validator("units")
    @classmethod
    def _ranges(cls, units: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        bad = [u for u, (low, high) in units.items() if low > high]
        if bad:
            raise ValueError(f"lowest above highest for units {bad}")
        return units


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str = Field(min_length=1)
    terms: dict[str, list[Term]] = Field(default_factory=dict)

    @field_validator("terms")
    @classmethod
    def _known_kinds(cls, terms: dict[str, list[Term]]) -> dict[str, list[Term]]:
        unknown = sorted(set(terms) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; kinds: {', '.join(KINDS)}")
        return terms


def normalise(name: str) -> str:
    """Case, accents, spacing and punctuation removed: ``"LDL-C"`` -> ``"ldlc"``."""
    return "".join(_words(name))


@functools.lru_cache(maxsize=16384)  # the same few names are looked up for every leaf
def _words(name: str) -> tuple[str, ...]:
    text = unicodedata.normalize("NFKC", name).casefold()
    return tuple(re.findall(r"[a-z0-9%]+|[^\x00-\x7f\s]", text))


def _unit_key(unit: str) -> str:
    return unicodedata.normalize("NFKC", unit).replace("µ", "u").replace("μ", "u").replace(
        " ", "").casefold()


@dataclass
class Vocabulary:
    """Terms by kind, with the lookups of the module docstring."""

    terms: dict[str, dict[str, Term]]
    versions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_name: dict[tuple[str, str], str] = {}
        self._by_code: dict[str, str] = {}
        self._phrases: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for kind, terms in self.terms.items():
            for term in terms.values():
                for name in (term.id, *term.names):
                    self._by_name.setdefault((kind, normalise(name)), term.id)
                    if kind in PHRASE_KINDS:
                        self._phrases.setdefault(kind, []).append((term.id, _words(name)))
                for code in term.loinc:
                    self._by_code.setdefault(code, term.id)

    @classmethod
    def shipped(cls) -> Vocabulary:
        return cls.load(SHIPPED)

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """One vocabulary file; every problem is an :class:`InputError` with line and field."""
        from assay.io.errors import issues_from
        from assay.io.yaml_json import line_finder, load_document

        document = load_document(path)
        try:
            parsed = _Document.model_validate(document)
        except ValidationError as exc:
            raise InputError(issues_from(exc, source=str(path), line_of=line_finder(path))) \
                from None
        issues = []
        terms: dict[str, dict[str, Term]] = {}
        for kind, listed in parsed.terms.items():
            seen: dict[str, str] = {}
            for index, term in enumerate(listed):
                for name in (term.id, *term.names):
                    owner = seen.setdefault(normalise(name), term.id)
                    if owner != term.id:
                        issues.append(Issue(str(path), line_finder(path)(
                            ("terms", kind, index)), f"terms.{kind}[{index}]",
                            f"name {name!r} of {term.id!r} already names {owner!r}"))
                terms.setdefault(kind, {})[term.id] = term
        if issues:
            raise InputError(issues)
        return cls(terms, [parsed.version])

    def merged(self, other: Vocabulary) -> Vocabulary:
        """``other``'s terms on top: an existing id gains names, codes, units and includes."""
        terms = {kind: dict(table) for kind, table in self.terms.items()}
        for kind, table in other.terms.items():
            mine = terms.setdefault(kind, {})
            for term_id, term in table.items():
                old = mine.get(term_id)
                mine[term_id] = term if old is None else Term(
                    id=term_id, names=_union(old.names, term.names),
                    loinc=_union(old.loinc, term.loinc), units={**old.units, **term.units},
                    includes=_union(old.includes, term.includes))
        return Vocabulary(terms, [*self.versions, *other.versions])

    @property
    def version(self) -> str:
        """The shipped version, then ``+`` a hash of each user file's content."""
        if len(self.versions) == 1:
            return self.versions[0]
        return f"{self.versions[0]}+{_digest(self)}"

    def term(self, kind: str, name: str) -> Term | None:
        """The term ``name`` (its id or any of its names) denotes, if any."""
        term_id = self._by_name.get((kind, normalise(name)))
        return None if term_id is None else self.terms[kind][term_id]

    def resolve(self, kind: str, name: str, code: str | None = None) -> set[str]:
        """The ids of the terms a memory entry of this name (and LOINC code) denotes."""
        found = set()
        if code is not None and code in self._by_code:
            found.add(self._by_code[code])
        parts = [name, re.sub(r"\([^)]*\)", " ", name), *re.findall(r"\(([^)]*)\)", name)]
        for part in parts:
            term = self.term(kind, part)
            if term is not None:
                found.add(term.id)
        if kind in PHRASE_KINDS:
            words = _words(name)
            found.update(term_id for term_id, phrase in self._phrases.get(kind, [])
                         if _contains(words, phrase))
        return found

    def matches(self, kind: str, wanted: str, name: str, code: str | None = None) -> bool:
        """Whether a memory entry named ``name`` meets the requirement ``kind:wanted``."""
        term = self.term(kind, wanted)
        if term is None:
            if kind in PHRASE_KINDS:
                return _contains(_words(name), _words(wanted))
            return normalise(name) == normalise(wanted)
        return bool(self.resolve(kind, name, code) & self._narrower(kind, term))

    def _narrower(self, kind: str, term: Term) -> set[str]:
        out, todo = set(), [term.id]
        while todo:
            term_id = todo.pop()
            if term_id in out:
                continue
            out.add(term_id)
            known = self.terms.get(kind, {}).get(term_id)
            todo += known.includes if known is not None else []
        return out

    def value_problem(self, kind: str, name: str, code: str | None, unit: str,
                      values: Sequence[float]) -> str | None:
        """Why a value of entry ``name`` in ``unit`` cannot be right, or None.

        Checked only for an entry that denotes exactly one term with units.
        """
        ids = self.resolve(kind, name, code)
        if len(ids) != 1:
            return None
        term = self.terms[kind][next(iter(ids))]
        if not term.units:
            return None
        ranges = {_unit_key(u): (u, r) for u, r in term.units.items()}
        hit = ranges.get(_unit_key(unit))
        if hit is None:
            shown = ", ".join(u for u in term.units if u) or "no unit"
            if not unit:
                return f"no unit given; {term.id} is recorded in {shown}"
            return f"{unit!r} is not a unit of {term.id}: use {shown}"
        label, (low, high) = hit
        for value in values:
            if not low <= value <= high:
                return (f"{name} {value:g}{' ' + unit if unit else ''} is not plausible "
                        f"({term.id}{' in ' + label if label else ''}: {low:g} to {high:g})")
        return None


def _contains(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return n > 0 and any(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def _union(a: Iterable[str], b: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _digest(vocabulary: Vocabulary) -> str:
    payload = {k: {i: t.model_dump(mode="json") for i, t in sorted(v.items())}
               for k, v in sorted(vocabulary.terms.items())}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]


@functools.lru_cache(maxsize=8)
def _load(extra: tuple[str, ...]) -> Vocabulary:
    table = Vocabulary.shipped()
    for path in extra:
        table = table.merged(Vocabulary.load(path))
    return table


def vocabulary() -> Vocabulary:
    """The active vocabulary: the shipped table plus the files of ``$ASSAY_HEALTH_VOCABULARY``."""
    extra = os.environ.get(VOCABULARY_ENV, "")
    return _load(tuple(p for p in extra.split(os.pathsep) if p))


__all__ = ["KINDS", "SHIPPED", "VOCABULARY_ENV", "Term", "Vocabulary", "normalise",
           "vocabulary"]
