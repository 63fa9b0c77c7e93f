"""A user's health memory (RubricsTree §4): profile, conditions, medications, labs, wearables.

Personal health agents answer with the user's own data at hand, and RubricsTree's Health Memory
leaves check that the answer uses it (grounding, numerical accuracy, personalisation). An
:class:`~assay.item.Item` may carry it as ``health_memory``; it is validated like the rest of
the item (errors name the line and field, e.g. ``health_memory.labs[2].value``), rendered by
:meth:`HealthMemory.render` into judge and router prompts in one stable text format, and read by
taxonomy leaves' ``requires`` conditions (:meth:`HealthMemory.has`).

Example:
    >>> memory = HealthMemory.model_validate({
    ...     "profile": {"age": 54, "sex": "female"},
    ...     "conditions": [{"name": "type 2 diabetes", "since": "2019"}],
    ...     "labs": [{"name": "HbA1c", "value": 7.9, "unit": "%",
    ...               "reference_range": {"low": 4.0, "high": 5.6}, "date": "2026-03-02"}]})
    >>> print(memory.render())
    Profile: age 54; sex female
    Conditions:
    - type 2 diabetes (since 2019)
    Labs:
    - HbA1c: 7.9 % (reference 4-5.6; HIGH) on 2026-03-02
    >>> memory.has("lab:hba1c"), memory.has("condition:diabetes"), memory.has("wearables")
    (True, True, False)
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

if TYPE_CHECKING:
    from assay.vocabulary.reading import Reading

Flag = Literal["LOW", "NORMAL", "HIGH"]
REQUIREMENT_KINDS = ("profile", "condition", "medication", "lab", "wearable")


class Profile(BaseModel):
    """Baseline facts about the user (free extra facts go in ``other``)."""

    model_config = ConfigDict(extra="forbid")

    age: int | None = Field(default=None, ge=0, le=130)
    sex: str | None = None
    height_cm: float | None = Field(default=None, gt=0, le=300)
    weight_kg: float | None = Field(default=None, gt=0, le=700)
    occupation: str | None = None
    other: dict[str, str] = Field(default_factory=dict)

    def facts(self) -> list[str]:
        out = [f"{name.replace('_', ' ')} {value}" for name, value in (
            ("age", self.age), ("sex", self.sex), ("height", _unit(self.height_cm, "cm")),
            ("weight", _unit(self.weight_kg, "kg")), ("occupation", self.occupation))
            if value is not None]
        out += [f"{k} {v}" for k, v in sorted(self.other.items())]
        return out


class Condition(BaseModel):
    """A condition as a problem list or an app records it. The name may say whose it is
    ("Family history of type 2 diabetes", "No history of hypertension"): see :attr:`is_users`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    since: str | None = None
    status: str | None = Field(default=None, description="active, resolved, suspected, refuted "
                               "(FHIR's clinical and verification statuses) ...")

    def reading(self) -> Reading:
        """The concept and assertion of this entry (:mod:`assay.vocabulary.reading`)."""
        from assay.vocabulary.reading import read_entry

        return read_entry("condition", self.name, status=self.status)

    @property
    def is_users(self) -> bool:
        """The user's own condition: not a relative's, not negated, ruled out or only
        suspected (a past one still is)."""
        return self.reading().is_users

    def render(self) -> str:
        notes = [n for n in (f"since {self.since}" if self.since else None, self.status) if n]
        return self.name + (f" ({'; '.join(notes)})" if notes else "")


class Medication(BaseModel):
    """A medicine as a medication list records it: brand or ingredient ("Toprol XL" is
    metoprolol); "Stopped metformin" or a ``stopped`` status is not taken (:attr:`is_users`)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    dose: str | None = None
    frequency: str | None = None
    since: str | None = None
    status: str | None = Field(default=None, description="active, stopped, completed ... "
                               "(FHIR MedicationStatement.status)")

    def reading(self) -> Reading:
        from assay.vocabulary.reading import read_entry

        return read_entry("medication", self.name, status=self.status)

    @property
    def is_users(self) -> bool:
        """A medicine the user takes (not stopped, refused or an allergy)."""
        return self.reading().is_users

    def render(self) -> str:
        text = " ".join(p for p in (self.name, self.dose, self.frequency) if p)
        notes = [n for n in (f"since {self.since}" if self.since else None, self.status) if n]
        return text + (f" ({'; '.join(notes)})" if notes else "")


class ReferenceRange(BaseModel):
    """Normal range of a lab value; either bound may be open."""

    model_config = ConfigDict(extra="forbid")

    low: float | None = None
    high: float | None = None

    @model_validator(mode="after")
    def _ordered(self) -> ReferenceRange:
        if self.low is None and self.high is None:
            raise PydanticCustomError("range_shape", "give low, high or both", {"loc": ()})
        if self.low is not None and self.high is not None and self.low > self.high:
            raise PydanticCustomError("range_shape", "low ({low}) is above high ({high})",
                                      {"low": self.low, "high": self.high, "loc": ("low",)})
        return self

    def render(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{_num(self.low)}-{_num(self.high)}"
        if self.low is not None:
            return f">= {_num(self.low)}"
        assert self.high is not None  # the validator above: at least one bound
        return f"<= {_num(self.high)}"


class Lab(BaseModel):
    """One lab result: value, unit, reference range and date."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    value: float
    unit: str = ""
    reference_range: ReferenceRange | None = None
    date: dt.date | None = None
    loinc: str | None = Field(default=None, pattern=r"^\d{1,7}-\d$",
                              description="LOINC code of the test, e.g. 4548-4 for HbA1c.")

    @model_validator(mode="after")
    def _unit_and_value(self) -> Lab:
        _check_value("lab", self.name, self.loinc, self.unit, {"value": self.value})
        return self

    def reading(self) -> Reading:
        """Concept and value in the concept's canonical unit ("Glucose, Serum" 5.4 mmol/L is
        glucose 97.3 mg/dL)."""
        from assay.vocabulary.reading import read_entry

        return read_entry("lab", self.name, value=self.value, unit=self.unit, code=self.loinc)

    @property
    def flag(self) -> Flag | None:
        """HIGH / LOW / NORMAL against the reference range (None without one)."""
        r = self.reference_range
        if r is None:
            return None
        if r.low is not None and self.value < r.low:
            return "LOW"
        if r.high is not None and self.value > r.high:
            return "HIGH"
        return "NORMAL"

    def render(self) -> str:
        text = f"{self.name}: {_num(self.value)}" + (f" {self.unit}" if self.unit else "")
        if self.reference_range is not None:
            text += f" (reference {self.reference_range.render()}; {self.flag})"
        return text + (f" on {self.date.isoformat()}" if self.date else "")


class WearableSeries(BaseModel):
    """A summary of one wearable metric over a period (e.g. 7 days of resting heart rate)."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(min_length=1)
    unit: str = ""
    days: int | None = Field(default=None, ge=1)
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    latest: float | None = None
    baseline: float | None = Field(default=None, description="The user's usual level.")

    @model_validator(mode="after")
    def _some_number(self) -> WearableSeries:
        if all(v is None for v in (self.mean, self.min, self.max, self.latest)):
            raise PydanticCustomError("series_shape", "a series needs mean, min, max or latest",
                                      {"loc": ()})
        if self.min is not None and self.max is not None and self.min > self.max:
            raise PydanticCustomError("series_shape", "min is above max", {"loc": ("min",)})
        _check_value("wearable", self.metric, None, self.unit, {
            k: v for k, v in (("mean", self.mean), ("min", self.min), ("max", self.max),
                              ("latest", self.latest), ("baseline", self.baseline))
            if v is not None})
        return self

    def reading(self) -> Reading:
        """Concept and headline value (latest, else mean) in the canonical unit."""
        from assay.vocabulary.reading import read_entry

        value = next((v for v in (self.latest, self.mean, self.max, self.min) if v is not None),
                     None)
        return read_entry("wearable", self.metric, value=value, unit=self.unit)

    def render(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        parts = [f"{name} {_num(v)}{unit}" for name, v in (
            ("mean", self.mean), ("min", self.min), ("max", self.max), ("latest", self.latest),
            ("baseline", self.baseline)) if v is not None]
        period = f" over {self.days} days" if self.days else ""
        return f"{self.metric}{period}: " + ", ".join(parts)


class HealthMemory(BaseModel):
    """Typed personal context of a health query; see the module docstring."""

    model_config = ConfigDict(extra="forbid")

    profile: Profile | None = None
    conditions: list[Condition] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    labs: list[Lab] = Field(default_factory=list)
    wearables: list[WearableSeries] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _from_fhir(cls, data: Any) -> Any:
        """FHIR resources (a list, a Bundle, one resource, or a ``fhir`` list beside the other
        sections) read into entries: :mod:`assay.vocabulary.fhir`."""
        if isinstance(data, list) or (isinstance(data, dict) and "resourceType" in data):
            data = {"fhir": data}
        if not isinstance(data, dict) or "fhir" not in data:
            return data
        from assay.vocabulary.fhir import FhirError, memory_sections

        try:
            sections = memory_sections(data["fhir"])
        except FhirError as exc:
            raise PydanticCustomError("fhir", str(exc).replace("{", "(").replace("}", ")"),
                                      {"loc": ("fhir", *exc.path)}) from None
        merged = {k: v for k, v in data.items() if k != "fhir"}
        for key, entries in sections.items():
            if entries:
                merged[key] = [*merged.get(key, []), *entries]
        return merged

    @model_validator(mode="after")
    def _within_the_cap(self) -> HealthMemory:
        from assay.limits import MAX_MEMORY_CHARS

        size = len(self.render())
        if size > MAX_MEMORY_CHARS:
            raise PydanticCustomError(
                "memory_size", "renders to {size} characters, over the limit of {limit} "
                "(assay.limits.MAX_MEMORY_CHARS): judge and router prompts both carry it",
                {"size": f"{size:,}", "limit": f"{MAX_MEMORY_CHARS:,}"})
        return self

    @property
    def is_empty(self) -> bool:
        return not (self.profile and self.profile.facts()) and not any(
            (self.conditions, self.medications, self.labs, self.wearables, self.notes))

    def render(self) -> str:
        """One stable text block: sections in a fixed order, entries in the given order."""
        lines: list[str] = []
        if self.profile is not None and self.profile.facts():
            lines.append("Profile: " + "; ".join(self.profile.facts()))
        for title, entries in (("Conditions", self.conditions), ("Medications", self.medications),
                               ("Labs", self.labs), ("Wearables", self.wearables)):
            if entries:
                lines.append(f"{title}:")
                lines += [f"- {e.render()}" for e in entries]
        if self.notes:
            lines.append("Notes:")
            lines += [f"- {n}" for n in self.notes]
        return "\n".join(lines)

    @staticmethod
    def check_requirement(requirement: str) -> None:
        """Raise ValueError unless ``requirement`` names a known kind (see :meth:`has`)."""
        kind = requirement.strip().lower().partition(":")[0].removesuffix("s")
        if kind not in REQUIREMENT_KINDS:
            raise ValueError(f"unknown health-memory requirement {requirement!r}; kinds: "
                             + ", ".join(REQUIREMENT_KINDS))

    def has(self, requirement: str) -> bool:
        """Whether the memory holds what ``requirement`` names.

        ``lab`` / ``labs``: any lab; ``lab:NAME``: a lab that is NAME by meaning, through the
        health vocabulary (:mod:`assay.vocabulary`: names as lab systems write them,
        abbreviations and LOINC codes; case does not matter); likewise ``condition``,
        ``medication``, ``wearable`` (matched on the metric) and ``profile`` (``profile:age``
        for one fact). Only the user's own conditions and current medicines count: a family
        history, a negated or ruled-out condition, a stopped medicine never meet a
        requirement. ``lab:NAME:abnormal`` needs a HIGH/LOW flag.
        """
        from assay.vocabulary import vocabulary

        self.check_requirement(requirement)
        kind, _, rest = requirement.strip().lower().partition(":")
        kind = kind.removesuffix("s")
        name, _, qualifier = rest.partition(":")
        if kind == "profile":
            facts = self.profile.facts() if self.profile else []
            return any(f.lower().startswith(name) for f in facts) if name else bool(facts)
        by_kind: dict[str, list[Any]] = {"condition": self.conditions,
                                         "medication": self.medications, "lab": self.labs,
                                         "wearable": self.wearables}
        entries = [e for e in by_kind[kind] if getattr(e, "is_users", True)]
        if name:
            table = vocabulary()
            entries = [e for e in entries if table.matches(
                kind, name, e.metric if kind == "wearable" else e.name, getattr(e, "loinc", None))]
        if qualifier == "abnormal":
            entries = [e for e in entries if getattr(e, "flag", None) in ("HIGH", "LOW")]
        return bool(entries)


def _check_value(kind: str, name: str, code: str | None, unit: str,
                 values: dict[str, float]) -> None:
    """Refuse a unit the vocabulary does not know for this analyte, or an implausible value."""
    from assay.vocabulary import vocabulary
    from assay.vocabulary.values import check

    table = vocabulary()
    for field_name, checked in (("unit", []), *((f, [v]) for f, v in values.items())):
        problem = check(table, kind, name, code, unit, checked)
        if problem is not None:
            message = problem.message.replace("{", "(").replace("}", ")")
            raise PydanticCustomError("health_value", message, {"loc": (field_name,)})


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _unit(value: float | None, unit: str) -> str | None:
    return None if value is None else f"{_num(value)} {unit}"
