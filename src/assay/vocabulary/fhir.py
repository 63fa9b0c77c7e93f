"""FHIR resources as health memory: ``Observation``, ``Condition``, ``MedicationStatement``.

Health apps and EHR exports hold the user's data as FHIR resources. A health memory may be given
as a list of them, a ``Bundle``, or beside the usual sections under ``fhir``; each resource is
validated with ``fhir.resources`` (FHIR R4B, the R4 that apps export, then R5) and read into
the memory's own entries:

* ``Observation``: a ``laboratory`` observation (or one whose LOINC code is not a vital sign)
  becomes a lab (name from ``code.text`` or the first coding's display, its LOINC code, the
  ``valueQuantity``, the first reference range, the date); a ``vital-signs``/``activity`` one a
  wearable reading; a blood-pressure panel (LOINC 85354-9) its systolic and diastolic
  components; one without a quantity a note.
* ``Condition``: name, onset, and a status from ``verificationStatus`` (``refuted`` is negated,
  ``provisional`` uncertain: :mod:`assay.vocabulary.context`) or else ``clinicalStatus``.
* ``MedicationStatement``: the medicine (R4 ``medicationCodeableConcept``, R5
  ``medication.concept``), the dose text or quantity, the status (``stopped`` is not taken), the
  start date.

Example:
    >>> sections = memory_sections([{"resourceType": "Observation", "status": "final",
    ...     "category": [{"coding": [{"code": "laboratory"}]}],
    ...     "code": {"coding": [{"system": "http://loinc.org", "code": "4548-4",
    ...                          "display": "Hemoglobin A1c/Hemoglobin.total in Blood"}],
    ...              "text": "HbA1c"},
    ...     "valueQuantity": {"value": 7.1, "unit": "%"}}])
    >>> sections["labs"]
    [{'name': 'HbA1c', 'value': 7.1, 'unit': '%', 'loinc': '4548-4'}]
"""

from __future__ import annotations

import importlib
from typing import Any

READ = ("Observation", "Condition", "MedicationStatement")
LOINC_SYSTEM = "http://loinc.org"
BLOOD_PRESSURE_PANEL = "85354-9"
# Vital-sign and activity LOINC codes (FHIR's vital-signs profile and common device exports):
# an Observation with one of these is a wearable reading even without a category.
VITAL_SIGNS = {
    "8867-4": "heart rate", "40443-4": "resting heart rate", "80404-7": "hrv",
    "59408-5": "spo2", "2708-6": "spo2", "9279-1": "respiratory rate", "29463-7": "weight",
    "39156-5": "bmi", "8310-5": "body temperature", "8480-6": "systolic blood pressure",
    "8462-4": "diastolic blood pressure", "55423-8": "steps", "41950-7": "steps",
    "93832-4": "sleep",
}
_WEARABLE_CATEGORIES = {"vital-signs", "activity", "fitness", "sleep"}


class FhirError(ValueError):
    """A resource that is not valid FHIR, or not one Assay reads: ``path`` locates it."""

    def __init__(self, path: tuple[str | int, ...], message: str):
        super().__init__(message)
        self.path = path


def memory_sections(resources: Any) -> dict[str, list[Any]]:
    """The health-memory sections (conditions, medications, labs, wearables, notes) of a list
    of resources, a Bundle or one resource; :class:`FhirError` names the first bad one."""
    listed = _resources(resources)
    out: dict[str, list[Any]] = {"conditions": [], "medications": [], "labs": [],
                                 "wearables": [], "notes": []}
    for index, resource in enumerate(listed):
        kind = resource.get("resourceType") if isinstance(resource, dict) else None
        if kind not in READ:
            raise FhirError((index, "resourceType"), f"{kind!r} is not read into a health "
                            f"memory: give {', '.join(READ)}")
        _validate(index, resource)
        if kind == "Observation":
            _observation(resource, out)
        elif kind == "Condition":
            out["conditions"].append(_condition(resource))
        else:
            out["medications"].append(_medication(resource))
    return out


def _resources(value: Any) -> list[Any]:
    if isinstance(value, dict) and value.get("resourceType") == "Bundle":
        return [e.get("resource") for e in value.get("entry", []) if isinstance(e, dict)]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return value
    raise FhirError((), "expected FHIR resources: a list, a Bundle or one resource")


def _validate(index: int, resource: dict[str, Any]) -> None:
    from pydantic import ValidationError

    errors: list[Any] = []
    for release in ("R4B", None):
        module = "fhir.resources" + (f".{release}" if release else "")
        kind = resource["resourceType"]
        model = getattr(importlib.import_module(f"{module}.{kind.lower()}"), kind)
        try:
            model.model_validate(resource)
            return
        except ValidationError as exc:
            errors.append(exc)
    first = errors[0].errors()[0]
    raise FhirError((index, *first["loc"]), f"not a valid FHIR {resource['resourceType']} "
                    f"(R4B or R5): {first['msg']}")


def _text(concept: dict[str, Any] | None) -> str | None:
    if not concept:
        return None
    if concept.get("text"):
        return str(concept["text"])
    for coding in concept.get("coding", []):
        if coding.get("display") or coding.get("code"):
            return str(coding.get("display") or coding.get("code"))
    return None


def _code(concept: dict[str, Any] | None, codes: tuple[str, ...] = ()) -> str | None:
    """The first coding's code (of ``system`` LOINC, or any when ``codes`` lists acceptable
    ones)."""
    for coding in (concept or {}).get("coding", []):
        code = coding.get("code")
        if code and (coding.get("system") == LOINC_SYSTEM or code in codes):
            return str(code)
    return None


def _date(value: Any) -> str | None:
    return str(value)[:10] if value else None


def _observation(resource: dict[str, Any], out: dict[str, list[Any]]) -> None:
    name = _text(resource.get("code")) or "observation"
    loinc = _code(resource.get("code"), tuple(VITAL_SIGNS))
    date = _date(resource.get("effectiveDateTime") or resource.get("issued"))
    categories = {c.get("code") for cat in resource.get("category", [])
                  for c in cat.get("coding", [])}
    if loinc == BLOOD_PRESSURE_PANEL:
        for component in resource.get("component", []):
            _quantity_entry(_text(component.get("code")) or "blood pressure",
                            _code(component.get("code"), tuple(VITAL_SIGNS)),
                            component.get("valueQuantity"), None, date, True, out)
        return
    wearable = bool(categories & _WEARABLE_CATEGORIES) or (
        "laboratory" not in categories and loinc in VITAL_SIGNS)
    ranges = resource.get("referenceRange") or [None]
    _quantity_entry(name, loinc, resource.get("valueQuantity"), ranges[0], date, wearable, out,
                    fallback=resource)


def _quantity_entry(name: str, loinc: str | None, quantity: dict[str, Any] | None,
                    reference: dict[str, Any] | None, date: str | None, wearable: bool,
                    out: dict[str, list[Any]], fallback: dict[str, Any] | None = None) -> None:
    if not quantity or quantity.get("value") is None:
        shown = str((fallback or {}).get("valueString") or _text(
            (fallback or {}).get("valueCodeableConcept")) or "no value")
        out["notes"].append(f"{name}: {shown}" + (f" on {date}" if date else ""))
        return
    value = float(quantity["value"])
    unit = str(quantity.get("unit") or quantity.get("code") or "")
    if wearable:
        # A display the vocabulary does not know gets the vital sign's name in front of it
        metric = name
        if loinc in VITAL_SIGNS and not _known(name):
            metric = f"{VITAL_SIGNS[loinc]} ({name})"
        out["wearables"].append({"metric": metric, "unit": unit, "latest": value})
        return
    lab: dict[str, Any] = {"name": name, "value": value, "unit": unit}
    if loinc:
        lab["loinc"] = loinc
    bounds = {k: reference[k]["value"] for k in ("low", "high")
              if reference and isinstance(reference.get(k), dict)
              and reference[k].get("value") is not None}
    if bounds:
        lab["reference_range"] = bounds
    if date:
        lab["date"] = date
    out["labs"].append(lab)


def _known(metric: str) -> bool:
    from assay.vocabulary import vocabulary

    return bool(vocabulary().resolve("wearable", metric))


def _status(concept: dict[str, Any] | None) -> str | None:
    for coding in (concept or {}).get("coding", []):
        if coding.get("code"):
            return str(coding["code"])
    return None


def _condition(resource: dict[str, Any]) -> dict[str, Any]:
    verification = _status(resource.get("verificationStatus"))
    clinical = _status(resource.get("clinicalStatus"))
    status = verification if verification not in (None, "confirmed", "unknown") else clinical
    entry: dict[str, Any] = {"name": _text(resource.get("code")) or "condition"}
    onset = resource.get("onsetDateTime") or resource.get("onsetString")
    if onset:
        entry["since"] = _date(onset) if resource.get("onsetDateTime") else str(onset)
    if status:
        entry["status"] = status
    return entry


def _medication(resource: dict[str, Any]) -> dict[str, Any]:
    concept = resource.get("medicationCodeableConcept") or (
        resource.get("medication") or {}).get("concept")
    entry: dict[str, Any] = {"name": _text(concept) or "medication"}
    dosage = (resource.get("dosage") or [{}])[0]
    if dosage.get("text"):
        entry["dose"] = str(dosage["text"])
    else:
        dose = ((dosage.get("doseAndRate") or [{}])[0]).get("doseQuantity")
        if dose and dose.get("value") is not None:
            entry["dose"] = f"{dose['value']:g} {dose.get('unit') or dose.get('code') or ''}" \
                .strip()
    period = resource.get("effectivePeriod") or {}
    start = period.get("start") or resource.get("effectiveDateTime")
    if start:
        entry["since"] = _date(start)
    if resource.get("status"):
        entry["status"] = str(resource["status"])
    return entry
