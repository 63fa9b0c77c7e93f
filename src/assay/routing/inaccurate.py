"""Inaccurate user data that stays plausible and consistent (RubricsTree §5.6).

The paper replaces "ground-truth health metrics with plausible but incorrect values". Moving each
value on its own gives data no body produces: HbA1c falling 6.6 → 4.8 % while fasting glucose
rises 92 → 129 mg/dL and the CGM mean 118 → 153; sleep efficiency 78 → 11 %. Here related
analytes move together along one physiological axis:

=============  ===========================================================  ===================
axis           members (coefficient per unit of the axis)                    the axis moves
=============  ===========================================================  ===================
glycaemia      HbA1c 1 %, fasting glucose 20 mg/dL, CGM mean 28.7 mg/dL      added (per 1 % A1c)
               (ADAG: eAG = 28.7 × A1c − 46.7), GMI 0.69 %
lipids         LDL, total cholesterol and non-HDL 1 mg/dL, ApoB 0.65 mg/dL   added (per mg/dL)
kidney         creatinine 1 mg/dL, BUN 12 mg/dL; eGFR by CKD-EPI's slope      added (per mg/dL)
               (−1.2 × eGFR / creatinine)
sleep          total sleep and each stage ×1, efficiency ×0.25, awake ×−0.5   scaled
recovery       resting heart rate and heart rate ×1, HRV ×−1.5                scaled
blood pressure systolic ×1, diastolic ×0.8, blood pressure ×1                 scaled
weight         weight, BMI and the profile's weight ×1 (at most 10 %)         scaled
=============  ===========================================================  ===================

On each axis present in the memory, the first member found (the anchor) gets a wrong value as
before (a lab with a reference range flips side: abnormal into the middle of the range, normal
out of it by ``shift``; anything else moves by ±``shift``), and the axis carries the others with
it. The move is then cut to what keeps every member inside its typical range (HbA1c 4.3–12 %,
fasting glucose 70–250 mg/dL, sleep efficiency 60–98 %, SpO2 88–100 %; :data:`TYPICAL`), and
reversed when the cut leaves less than a quarter of it. Entries on no axis move alone, inside
their typical range. Every change is recorded (entry, concept, field, from, to).

Example:
    >>> from assay.health_memory import HealthMemory
    >>> memory = HealthMemory.model_validate({"labs": [
    ...     {"name": "HbA1c", "value": 6.6, "unit": "%", "reference_range": {"low": 4, "high": 5.6}},
    ...     {"name": "Glucose, fasting", "value": 92, "unit": "mg/dL"}],
    ...     "wearables": [{"metric": "CGM average glucose", "unit": "mg/dL", "mean": 118}]})
    >>> import random
    >>> moved, changes = inaccurate_memory(memory, random.Random(0), 0.3)
    >>> [(c["name"], c["from"], c["to"]) for c in changes]
    [('HbA1c', 6.6, 5.5), ('Glucose, fasting', 92.0, 70.0), ('CGM average glucose', 118.0, 86.0)]
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from assay.health_memory import HealthMemory, Lab, WearableSeries

SERIES_FIELDS = ("mean", "min", "max", "latest", "baseline")
# Typical ranges in each concept's canonical unit: a wrong value stays inside what people show.
TYPICAL: dict[tuple[str, str], tuple[float, float]] = {
    ("lab", "hba1c"): (4.3, 12), ("lab", "glucose"): (70, 250),
    ("wearable", "cgm glucose"): (75, 300), ("wearable", "gmi"): (5, 12),
    ("lab", "ldl"): (40, 250), ("lab", "total cholesterol"): (110, 350),
    ("lab", "non-hdl cholesterol"): (60, 300), ("lab", "apob"): (40, 200),
    ("lab", "creatinine"): (0.5, 4), ("lab", "bun"): (6, 60), ("lab", "egfr"): (10, 130),
    ("wearable", "sleep"): (3, 11), ("wearable", "deep sleep"): (0.25, 2.5),
    ("wearable", "rem sleep"): (0.5, 3), ("wearable", "light sleep"): (1.5, 7),
    ("wearable", "awake time"): (0.1, 2), ("wearable", "sleep efficiency"): (60, 98),
    ("wearable", "sleep score"): (30, 100),
    ("wearable", "resting heart rate"): (40, 110), ("wearable", "heart rate"): (40, 180),
    ("wearable", "hrv"): (10, 150), ("wearable", "spo2"): (88, 100),
    ("wearable", "respiratory rate"): (8, 30), ("wearable", "body temperature"): (35.5, 39.5),
    ("wearable", "systolic blood pressure"): (85, 190),
    ("wearable", "diastolic blood pressure"): (50, 120),
    ("wearable", "blood pressure"): (50, 190), ("wearable", "weight"): (30, 300),
    ("wearable", "bmi"): (15, 60), ("wearable", "steps"): (0, 40000),
    ("wearable", "active minutes"): (0, 300), ("wearable", "vo2 max"): (15, 70),
    ("wearable", "time in range"): (0, 100),
}
MAX_SHIFT = {("wearable", "weight"): 0.1, ("wearable", "bmi"): 0.1}


@dataclass(frozen=True)
class Axis:
    name: str
    scaled: bool                       # members scale by (1 + c·x), else add c·x
    members: tuple[tuple[str, str, float], ...]   # (kind, concept, coefficient)


AXES = (
    Axis("glycaemia", False, (("lab", "hba1c", 1.0), ("lab", "glucose", 20.0),
                              ("wearable", "cgm glucose", 28.7), ("wearable", "gmi", 0.69))),
    Axis("lipids", False, (("lab", "ldl", 1.0), ("lab", "total cholesterol", 1.0),
                           ("lab", "non-hdl cholesterol", 1.0), ("lab", "apob", 0.65))),
    Axis("kidney", False, (("lab", "creatinine", 1.0), ("lab", "bun", 12.0),
                           ("lab", "egfr", 0.0))),  # eGFR's slope depends on its values
    Axis("sleep", True, (("wearable", "sleep", 1.0), ("wearable", "deep sleep", 1.0),
                         ("wearable", "rem sleep", 1.0), ("wearable", "light sleep", 1.0),
                         ("wearable", "sleep efficiency", 0.25),
                         ("wearable", "awake time", -0.5))),
    Axis("recovery", True, (("wearable", "resting heart rate", 1.0),
                            ("wearable", "heart rate", 1.0), ("wearable", "hrv", -1.5))),
    Axis("blood pressure", True, (("wearable", "systolic blood pressure", 1.0),
                                  ("wearable", "diastolic blood pressure", 0.8),
                                  ("wearable", "blood pressure", 1.0))),
    Axis("weight", True, (("wearable", "weight", 1.0), ("wearable", "bmi", 1.0))),
)


@dataclass
class _Member:
    section: str
    index: int
    kind: str
    concept: str
    entry: Any
    unit: str
    values: dict[str, float]       # field -> value in the canonical unit
    coefficient: float = 0.0


def inaccurate_memory(memory: HealthMemory, rng: random.Random,
                      shift: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The memory (as a dict) with plausible, consistent wrong values, and the changes made."""
    members = _members(memory)
    new_values: dict[tuple[str, int], dict[str, float]] = {}
    used: set[tuple[str, int]] = set()
    for axis in AXES:
        present = [(m, c) for kind, concept, c in axis.members for m in members
                   if (m.kind, m.concept) == (kind, concept) and (m.section, m.index) not in used]
        if not present:
            continue
        for member, coefficient in present:
            member.coefficient = coefficient
            used.add((member.section, member.index))
        if axis.name == "kidney":
            _egfr_slope([m for m, _ in present])
        x = _axis_move(axis, [m for m, _ in present], rng, shift)
        for member, _ in present:
            new_values[(member.section, member.index)] = {
                f: _clamp(_apply(axis, member, v, x), member) for f, v in member.values.items()}
    for member in members:
        key = (member.section, member.index)
        if key not in used:
            axis = Axis("alone", True, ((member.kind, member.concept, 1.0),))
            member.coefficient = 1.0
            x = _axis_move(axis, [member], rng, shift)
            new_values[key] = {f: _clamp(_apply(axis, member, v, x), member)
                               for f, v in member.values.items()}
    return _rebuilt(memory, members, new_values)


def _members(memory: HealthMemory) -> list[_Member]:
    out = []
    entries: list[tuple[str, int, Lab | WearableSeries]] = [
        *(("labs", i, e) for i, e in enumerate(memory.labs)),
        *(("wearables", i, e) for i, e in enumerate(memory.wearables))]
    for section, index, entry in entries:
        reading = entry.reading()
        kind = "lab" if section == "labs" else "wearable"
        fields = {"value": entry.value} if isinstance(entry, Lab) else {
            f: getattr(entry, f) for f in SERIES_FIELDS if getattr(entry, f) is not None}
        values = {f: _to_canonical(kind, reading.concept, v, entry.unit)
                  for f, v in fields.items()}
        out.append(_Member(section, index, kind, reading.concept or "", entry,
                           entry.unit, values))
    return out


def _to_canonical(kind: str, concept: str | None, value: float, unit: str) -> float:
    from assay.vocabulary import vocabulary
    from assay.vocabulary.values import canonical

    moved = canonical(vocabulary(), kind, concept, value, unit) if concept else None
    return value if moved is None else moved[0]


def _from_canonical(member: _Member, value: float) -> float:
    from assay.vocabulary import vocabulary
    from assay.vocabulary.units import convert

    term = vocabulary().terms.get(member.kind, {}).get(member.concept)
    if term is None or term.canonical_unit is None:
        return value
    back = convert(value, term.canonical_unit, member.unit, molar_mass=term.molar_mass,
                   affine=term.affine)
    return value if back is None else back


def _egfr_slope(present: list[_Member]) -> None:
    creatinine = next((m for m in present if m.concept == "creatinine"), None)
    egfr = next((m for m in present if m.concept == "egfr"), None)
    if egfr is not None:
        base = _headline(creatinine) if creatinine else 1.0
        egfr.coefficient = -1.2 * _headline(egfr) / max(base, 0.1)


def _headline_field(member: _Member) -> str:
    return next(f for f in ("value", "latest", "mean", "baseline", "max", "min")
                if f in member.values)


def _headline(member: _Member) -> float:
    return member.values[_headline_field(member)]


def _apply(axis: Axis, member: _Member, value: float, x: float) -> float:
    return value * (1 + member.coefficient * x) if axis.scaled else value + member.coefficient * x


def _typical(member: _Member) -> tuple[float, float] | None:
    bounds = TYPICAL.get((member.kind, member.concept))
    if bounds is None:
        return None
    value = _headline(member)
    return min(bounds[0], value), max(bounds[1], value)  # never push a real value back inside


def _clamp(value: float, member: _Member) -> float:
    bounds = _typical(member)
    low, high = bounds if bounds is not None else (0.0, float("inf"))
    return min(max(value, low), high)


def _axis_move(axis: Axis, present: list[_Member], rng: random.Random, shift: float) -> float:
    """The axis's move: the anchor's wrong value, cut to keep every member typical."""
    anchor = present[0]
    wanted = _anchor_move(axis, anchor, rng, shift)
    low, high = -float("inf"), float("inf")
    for member in present:
        bounds, c = _typical(member), member.coefficient
        if bounds is None or not c:
            continue
        value = _headline(member)
        if axis.scaled:
            if not value:
                continue
            ends = ((bounds[0] / value - 1) / c, (bounds[1] / value - 1) / c)
        else:
            ends = ((bounds[0] - value) / c, (bounds[1] - value) / c)
        low, high = max(low, min(ends)), min(high, max(ends))
    limit = MAX_SHIFT.get((anchor.kind, anchor.concept))
    if axis.scaled and limit is not None:
        low, high = max(low, -limit), min(high, limit)

    def cut(x: float) -> float:
        return min(max(x, low), high)

    moved = cut(wanted)
    if abs(moved) < 0.25 * abs(wanted) and abs(cut(-wanted)) > abs(moved):
        moved = cut(-wanted)
    return moved


def _anchor_move(axis: Axis, anchor: _Member, rng: random.Random, shift: float) -> float:
    """The anchor's wrong move in axis units: a flip across its reference range, else ±shift."""
    value, c = _headline(anchor), anchor.coefficient or 1.0
    entry = anchor.entry
    r = entry.reference_range if isinstance(entry, Lab) else None
    if r is not None:
        low = None if r.low is None else _to_canonical(anchor.kind, anchor.concept, r.low,
                                                       anchor.unit)
        high = None if r.high is None else _to_canonical(anchor.kind, anchor.concept, r.high,
                                                         anchor.unit)
        if entry.flag in ("HIGH", "LOW"):
            target = ((low + high) / 2 if low is not None and high is not None
                      else high * (1 - shift / 2) if high is not None
                      else low * (1 + shift / 2))  # type: ignore[operator]
        elif high is not None:
            target = high * (1 + shift)
        else:
            target = low * (1 - shift)  # type: ignore[operator]
    else:
        target = value * (1 + shift if rng.random() < 0.5 else 1 - shift)
    if axis.scaled:
        return (target / value - 1) / c if value else 0.0
    return (target - value) / c


def _rebuilt(memory: HealthMemory, members: list[_Member],
             new_values: dict[tuple[str, int], dict[str, float]],
             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = memory.model_dump(mode="json")
    changes: list[dict[str, Any]] = []
    for member in members:
        moved = new_values[(member.section, member.index)]
        row = out[member.section][member.index]
        wrong = {field: _round_like(_from_canonical(member, v), row[field])
                 for field, v in moved.items()}
        if not _valid(member, {**row, **wrong}):
            continue  # a value of an unknown analyte moved out of what any analyte can read
        for field, new in wrong.items():
            old = row[field]
            if new != old:
                row[field] = new
                changes.append({"entry": f"{member.section}[{member.index}]",
                                "name": row.get("name") or row.get("metric"),
                                "concept": member.concept or None, "field": field,
                                "from": float(old), "to": new})
    weight = next((m for m in members if m.concept == "weight"), None)
    if weight is not None and out.get("profile") and out["profile"].get("weight_kg"):
        field = _headline_field(weight)
        old_headline = weight.values[field]
        new_headline = new_values[(weight.section, weight.index)][field]
        if old_headline:
            old = out["profile"]["weight_kg"]
            new = _round_like(old * new_headline / old_headline, old)
            if new != old:
                out["profile"]["weight_kg"] = new
                changes.append({"entry": "profile", "name": "weight_kg", "concept": "weight",
                                "field": "weight_kg", "from": float(old), "to": new})
    return out, changes


def _valid(member: _Member, row: dict[str, Any]) -> bool:
    try:
        type(member.entry).model_validate(row)
    except ValueError:
        return False
    return True


def _round_like(value: float, like: float) -> float:
    text = f"{like:g}"
    decimals = len(text.split(".")[1]) if "." in text else 0
    return round(max(0.0, value), decimals)
