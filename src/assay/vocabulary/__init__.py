"""The health vocabulary: names, abbreviations, LOINC codes, units and plausible values.

A taxonomy leaf's ``requires`` (``lab:hba1c``, ``wearable:hrv``) names a term; a health
memory entry meets it when the entry's name, or a lab's ``loinc`` code, is one of the term's.
Lab and wearable names are read as lab systems and apps write them (:mod:`.names`: "Glucose,
Fasting", "Creatinine, Serum", "LDL Chol Calc (NIH)", "eGFR CKD-EPI 2021", "Overnight HRV") and
match whole (``glycated hemoglobin`` is HbA1c, not hemoglobin; ``heart rate variability`` is not
``heart rate``); a condition or medication matches when one of the term's names appears in it as
whole words, the longest name found winning (``type 2 diabetes`` is diabetes, ``pre-diabetes``
is not; "Lipitor 20 mg" is atorvastatin). A term may include narrower ones (``medication:statin``
is met by atorvastatin, ``wearable:sleep`` by deep-sleep minutes). A requirement naming no term
matches an entry of exactly that name. Whether a condition or medication entry is the user's own
("Family history of ...", "Stopped ...") is :mod:`.context`'s; units and plausible values are
:mod:`.values`'s; :func:`assay.vocabulary.reading.read_entry` puts it all together.

The shipped table is ``health-vocabulary.yaml`` (versioned, with its sources); a user's files in
the same format, named by ``$ASSAY_HEALTH_VOCABULARY`` (several joined by the path separator) or
``assay --health-vocabulary FILE``, add terms, names, codes and units on top.

Example:
    >>> v = vocabulary()
    >>> v.matches("lab", "hba1c", "Glycated hemoglobin"), v.matches("lab", "hemoglobin",
    ...     "Glycated hemoglobin"), v.matches("lab", "creatinine", "Creatinine, Serum")
    (True, False, True)
    >>> v.matches("wearable", "resting heart rate", "Daily resting heart rate"), v.matches(
    ...     "wearable", "hrv", "heart rate"), v.matches("wearable", "sleep", "deep sleep")
    (True, False, True)
    >>> v.matches("condition", "diabetes", "DM2"), v.matches("condition", "diabetes",
    ...     "pre-diabetes"), v.matches("medication", "statin", "Lipitor 20 mg")
    (True, False, True)
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable
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
    molar_mass: float | None = Field(default=None, gt=0, description="g/mol, for mass <-> molar "
                                     "concentrations.")
    affine: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description='"FROM -> TO": [slope, intercept] for conversions no '
        "units library knows (HbA1c % -> mmol/mol).")
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

    @field_validator("affine")
    @classmethod
    def _pairs(cls, affine: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        bad = [k for k, (slope, _) in affine.items() if "->" not in k or not slope]
        if bad:
            raise ValueError(f'write "FROM -> TO": [slope, intercept] with a slope other than 0; '
                             f"got {bad}")
        return affine

    @property
    def canonical_unit(self) -> str | None:
        """The first listed unit: values are converted into it before they are compared."""
        return next(iter(self.units), None)


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str = Field(min_length=1)
    sources: list[str] = Field(default_factory=list)
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
    return "".join(words(name))


@functools.lru_cache(maxsize=16384)  # the same few names are looked up for every leaf
def words(name: str) -> tuple[str, ...]:
    """The words of a name, case-folded: ``"Mother's HTN"`` -> ``('mother', 's', 'htn')``."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return tuple(re.findall(r"[a-z0-9%]+|[^\x00-\x7f\s]", text))


@dataclass(frozen=True)
class Hit:
    """A term found in a condition or medication entry, at word positions [start, end)."""

    term: str
    start: int
    end: int


@dataclass
class Vocabulary:
    """Terms by kind, with the lookups of the module docstring."""

    terms: dict[str, dict[str, Term]]
    versions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_name: dict[tuple[str, str], str] = {}
        self._by_code: dict[str, str] = {}
        # kind -> first word -> (term id, phrase): a name is looked for only where its first
        # word is
        self._phrases: dict[str, dict[str, list[tuple[str, tuple[str, ...]]]]] = {}
        self._found: dict[tuple[str, str], list[Hit]] = {}
        for kind, terms in self.terms.items():
            for term in terms.values():
                for name in (term.id, *term.names):
                    self._by_name.setdefault((kind, normalise(name)), term.id)
                    phrase = words(name)
                    if kind in PHRASE_KINDS and phrase:
                        self._phrases.setdefault(kind, {}).setdefault(phrase[0], []).append(
                            (term.id, phrase))
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
                    molar_mass=term.molar_mass or old.molar_mass,
                    affine={**old.affine, **term.affine},
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

    def find(self, kind: str, text: str) -> list[Hit]:
        """The terms of ``kind`` named in ``text`` as whole words, longest first where two
        overlap ("type 2 diabetes" hides the "diabetes" inside it), in reading order."""
        cached = self._found.get((kind, text))
        if cached is not None:
            return list(cached)
        tokens = words(text)
        by_first = self._phrases.get(kind, {})
        hits = [Hit(term_id, i, i + len(phrase))
                for i, token in enumerate(tokens) for term_id, phrase in by_first.get(token, ())
                if tokens[i:i + len(phrase)] == phrase]
        kept = [h for h in hits if not any(
            o.start <= h.start and h.end <= o.end and (o.end - o.start) > (h.end - h.start)
            for o in hits)]
        found = sorted(set(kept), key=lambda h: (h.start, -h.end))
        if len(self._found) < 65536:  # the same few entries are read for every leaf
            self._found[(kind, text)] = found
        return list(found)

    def resolve(self, kind: str, name: str, code: str | None = None) -> set[str]:
        """The ids of the terms a memory entry of this name (and LOINC code) denotes."""
        from assay.vocabulary.names import forms

        found = set()
        if code is not None and code in self._by_code:
            found.add(self._by_code[code])
        if kind in PHRASE_KINDS:
            found.update(hit.term for hit in self.find(kind, name))
            return found
        for form in forms(kind, name):
            term = self.term(kind, form)
            if term is not None:
                found.add(term.id)
                break
        return found

    def matches(self, kind: str, wanted: str, name: str, code: str | None = None) -> bool:
        """Whether a memory entry named ``name`` meets the requirement ``kind:wanted``."""
        term = self.term(kind, wanted)
        if term is None:
            if kind in PHRASE_KINDS:
                return _contains(words(name), words(wanted))
            return normalise(name) == normalise(wanted)
        return bool(self.resolve(kind, name, code) & self.narrower(kind, term.id))

    def narrower(self, kind: str, term_id: str) -> set[str]:
        """``term_id`` and every term it includes, recursively."""
        out: set[str] = set()
        todo = [term_id]
        while todo:
            current = todo.pop()
            if current in out:
                continue
            out.add(current)
            known = self.terms.get(kind, {}).get(current)
            todo += known.includes if known is not None else []
        return out


def _positions(tokens: tuple[str, ...], phrase: tuple[str, ...]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(tokens) - n + 1) if tokens[i:i + n] == phrase] if n else []


def _contains(tokens: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    return bool(_positions(tokens, phrase))


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


__all__ = ["KINDS", "SHIPPED", "VOCABULARY_ENV", "Hit", "Term", "Vocabulary", "normalise",
           "vocabulary", "words"]
