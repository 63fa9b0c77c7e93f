"""Units of health measurements, converted with pint.

Lab reports, EHR exports (UCUM) and apps write one unit many ways: ``umol/L``, ``µmol/L`` and
``mcmol/L``; ``x10E3/uL``, ``10*3/uL``, ``K/uL`` and ``10^9/L`` (the same count); ``uIU/mL``,
``m[IU]/L`` and ``mIU/L`` (the same concentration); ``count/min`` and ``bpm``. :func:`unit_key`
gives each spelling one key, :func:`convert` converts a value between two units with pint,
through the analyte's molar mass where mass and molar concentrations meet (glucose mg/dL ↔
mmol/L, creatinine mg/dL ↔ µmol/L), and through a term's ``affine`` equations where no units
library can know the relation (HbA1c % ↔ mmol/mol is the IFCC-NGSP master equation; mEq/L ↔
mmol/L depends on the ion's charge). Two ratio units of different scale (``%`` and
``mmol/mol``) are never converted by pint: for an analyte they are different measures.

The registry is built on first use (pint parses its definitions then), so importing this module
costs nothing.

Example:
    >>> round(convert(5.4, "mmol/L", "mg/dL", molar_mass=180.156), 1)     # glucose
    97.3
    >>> convert(250, "x10E3/uL", "10^9/L"), convert(2.1, "uIU/mL", "m[IU]/L")
    (250.0, 2.1)
    >>> round(convert(53, "mmol/mol", "%", affine={"% -> mmol/mol": (10.929, -23.497)}), 2)
    7.0
    >>> convert(6.5, "%", "mmol/mol") is None       # a ratio of another scale: not by pint
    True
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

_REGISTRY: Any = None
# Units the default pint definitions lack, as health devices and reports write them.
_DEFINITIONS = (
    "beat = count",
    "bpm = beat / minute",
    "breath = count",
    "brpm = breath / minute",
    "step = count",
    "international_unit = enzyme_unit = IU",
)
_SPELLINGS = (  # (pattern, replacement) applied to the unit key before pint parses it
    (r"^(x|\*)", ""),
    (r"10\*(\d+)|10\^(\d+)|10e(\d+)", lambda m: "1e" + next(g for g in m.groups() if g)),
    (r"^k/", "1e3/"), (r"^thou/", "1e3/"), (r"^(m|mil)/", "1e6/"),
    (r"\bhrs?\b", "hour"), (r"\bmins\b", "minute"), (r"\blbs\b", "lb"),
    (r"m2\b", "m**2"), (r"^/", "1/"), (r"%", "percent"), (r"\bsteps\b", "step"),
)


def registry() -> Any:
    """The shared pint registry (built once, on first use)."""
    global _REGISTRY
    if _REGISTRY is None:
        import pint

        ureg: Any = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
        for line in _DEFINITIONS:
            ureg.define(line)
        _REGISTRY = ureg
    return _REGISTRY


@functools.lru_cache(maxsize=4096)
def unit_key(unit: str) -> str:
    """One key per spelling of a unit: ``"µmol/L"``, ``"mcmol/L"`` -> ``"umol/l"``;
    ``"mL/min/{1.73_m2}"``, ``"mL/min/1.73 m²"`` -> ``"ml/min/1.73m2"``; ``"mg/g creat"`` ->
    ``"mg/g"``; ``"m[IU]/L"`` -> ``"miu/l"``."""
    text = unicodedata.normalize("NFKC", unit).strip()
    text = text.replace("µ", "u").replace("μ", "u").replace("×", "x")
    text = re.sub(r"\bmc(?=[a-zA-Z])", "u", text)                       # mcg, mcL, mcmol
    text = re.sub(r"\{(1\.73)[_ ]?m2\}", r"\1m2", text)                  # UCUM eGFR area
    text = re.sub(r"\{[^}]*\}", "", text)                                 # UCUM annotations
    text = text.replace("[IU]", "IU").replace("[iU]", "IU").replace("[lb_av]", "lb")
    text = text.replace("[Hg]", "Hg").replace("[degF]", "degF").replace("Cel", "degC")
    text = text.replace("°F", "degF").replace("°C", "degC")
    text = re.sub(r"\s*(creat|creatinine)$", "", text, flags=re.IGNORECASE)  # "mg/g creat"
    text = re.sub(r"\s*(sq\.? ?m|m²)", "m2", text)
    return text.replace(" ", "").casefold()


def convert(value: float, source: str, target: str, *, molar_mass: float | None = None,
            affine: Mapping[str, tuple[float, float]] | None = None) -> float | None:
    """``value`` in ``source`` units expressed in ``target`` units, or None when they do not
    convert (see the module docstring). ``affine``: ``{"FROM -> TO": (slope, intercept)}``."""
    key_from, key_to = unit_key(source), unit_key(target)
    if key_from == key_to:
        return float(value)
    for pair, (slope, intercept) in (affine or {}).items():
        a, _, b = pair.partition("->")
        if (unit_key(a), unit_key(b)) == (key_from, key_to):
            return value * slope + intercept
        if (unit_key(b), unit_key(a)) == (key_from, key_to) and slope:
            return (value - intercept) / slope
    return _by_pint(value, key_from, key_to, molar_mass)


def convertible(source: str, target: str) -> bool:
    """Whether pint can relate the two units at all (a molar mass given where needed)."""
    return _by_pint(1.0, unit_key(source), unit_key(target), 1.0) is not None


def _by_pint(value: float, key_from: str, key_to: str, molar_mass: float | None) -> float | None:
    parsed_from, parsed_to = _parsed(key_from), _parsed(key_to)
    if parsed_from is None or parsed_to is None:
        return None
    import pint

    ureg = registry()
    (scale_from, units_from), (scale_to, units_to) = parsed_from, parsed_to
    quantity = ureg.Quantity(value * scale_from, units_from)
    unit_of_target = ureg.Quantity(scale_to, units_to)
    # Two ratios: only the same scale (count and steps), never % against mmol/mol.
    if quantity.dimensionless and unit_of_target.dimensionless and ureg.Quantity(
            scale_from, units_from).to("dimensionless").m != unit_of_target.to("dimensionless").m:
        return None
    attempts = [quantity]
    if molar_mass:
        mass = ureg.Quantity(molar_mass, "g/mol")
        attempts += [quantity * mass, quantity / mass]
    for attempt in attempts:
        try:
            return float(attempt.to(units_to).m / scale_to)
        except pint.DimensionalityError:
            continue
    return None


@functools.lru_cache(maxsize=4096)
def _parsed(key: str) -> tuple[float, Any] | None:
    """(scale, pint units) of a unit key: ``"1e3/ul"`` -> (1000, 1/microliter); None when pint
    cannot read it."""
    if not key or "1.73m2" in key:
        return None
    text = key
    for pattern, replacement in _SPELLINGS:
        text = re.sub(pattern, replacement, text)
    ureg = registry()
    try:
        parsed = ureg.parse_expression(_case(text))
    except Exception:  # noqa: BLE001  pint raises several unrelated kinds on a bad unit text
        return None
    if not hasattr(parsed, "units"):
        return None
    return float(parsed.m), parsed.units


def _case(text: str) -> str:
    """Unit keys are case-folded; pint's symbols are not (``ml`` is not ``mL``, ``dl`` not
    ``dL``): restore the case pint needs."""
    text = re.sub(r"(?<![a-z])([munpfd]?)l\b", lambda m: m.group(1) + "L", text)
    text = re.sub(r"\b([munp]?)iu\b", lambda m: m.group(1) + "IU", text)
    text = re.sub(r"\b([munp]?)u/", lambda m: m.group(1) + "U/", text)   # U/L, mU/L
    text = re.sub(r"\bmmhg\b", "mmHg", text)
    text = re.sub(r"\bdeg(c|f)\b", lambda m: "deg" + m.group(1).upper(), text)
    return text
