"""How many health-memory entries, as lab reports and apps write them, are read right?

Run from the repository root::

    .venv/bin/python benchmarks/health_memory.py             # the shipped test set
    .venv/bin/python benchmarks/health_memory.py --cases my-entries.yaml --misses

The set (``tests/data/health_memory/entries.yaml``, kept apart from the vocabulary) gives each
entry as a system writes it and what it means: the concept, the value and unit in the concept's
canonical unit, the flags (implausible, unit, unrecognised; family, negated, not_current,
uncertain) and a taxonomy requirement the entry must meet, or must not.

An entry is handled right when both hold:

* reading: :func:`assay.vocabulary.reading.read_entry` gives the concept, the value within 1 %
  in the same unit, and exactly the flags expected;
* memory: in a :class:`~assay.health_memory.HealthMemory`, the entry is refused when a value or
  unit flag is expected, and otherwise meets its requirement exactly when it is the user's own
  (and never the ``absent`` one).

The table gives the count per kind and overall; ``--misses`` lists each entry handled wrong and
why.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "data" / "health_memory" / "entries.yaml"
REFUSED = {"implausible", "unit"}
NOT_THE_USERS = {"family", "negated", "not_current", "uncertain"}


def memory_of(case: dict[str, Any]) -> dict[str, Any]:
    """The one-entry health memory of a case."""
    kind = case["kind"]
    if kind == "lab":
        lab = {"name": case["name"], "value": case["value"], "unit": case.get("unit", "")}
        return {"labs": [{**lab, **({"loinc": case["loinc"]} if case.get("loinc") else {})}]}
    if kind == "wearable":
        return {"wearables": [{"metric": case["name"], "unit": case.get("unit", ""),
                               "mean": case["value"]}]}
    entry = {"name": case["name"], **({"status": case["status"]} if case.get("status") else {})}
    return {"conditions" if kind == "condition" else "medications": [entry]}


def judge(case: dict[str, Any]) -> list[str]:
    """Why the case is handled wrong (empty when right)."""
    from assay.health_memory import HealthMemory
    from assay.vocabulary.reading import read_entry

    expect = case["expect"]
    flags = set(expect.get("flags", []))
    why = []
    reading = read_entry(case["kind"], case["name"], value=case.get("value"),
                         unit=case.get("unit", ""), code=case.get("loinc"),
                         status=case.get("status"))
    if reading.concept != expect.get("concept"):
        why.append(f"concept {reading.concept!r}, expected {expect.get('concept')!r}")
    if set(reading.flags) != flags:
        why.append(f"flags {sorted(reading.flags)}, expected {sorted(flags)}")
    if "value" in expect and (reading.value is None or not math.isclose(
            reading.value, expect["value"], rel_tol=0.01)):
        why.append(f"value {reading.value}, expected {expect['value']}")
    if "unit" in expect and reading.unit != expect["unit"]:
        why.append(f"unit {reading.unit!r}, expected {expect['unit']!r}")
    try:
        memory = HealthMemory.model_validate(memory_of(case))
    except ValueError as exc:
        if not flags & REFUSED:
            why.append(f"refused: {str(exc).splitlines()[-1].strip()}")
        return why
    if flags & REFUSED:
        why.append("accepted, expected refused")
        return why
    if case.get("requirement") and memory.has(case["requirement"]) is bool(flags & NOT_THE_USERS):
        why.append(f"has({case['requirement']!r}) is {not bool(flags & NOT_THE_USERS)!s} "
                   "wrongly".replace("True wrongly", "False").replace("False wrongly", "True"))
    if expect.get("absent") and memory.has(expect["absent"]):
        why.append(f"meets {expect['absent']!r}, which it is not")
    return why


def run(path: Path) -> tuple[dict[str, list[int]], list[tuple[dict[str, Any], list[str]]]]:
    cases = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
    counts: dict[str, list[int]] = {}
    misses = []
    for case in cases:
        why = judge(case)
        row = counts.setdefault(case["kind"], [0, 0])
        row[0] += not why
        row[1] += 1
        if why:
            misses.append((case, why))
    return counts, misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--misses", action="store_true", help="list each entry handled wrong")
    args = parser.parse_args(argv)
    counts, misses = run(args.cases)
    print(f"{'kind':<12} {'right':>6} {'of':>4} {'%':>7}")
    total = [sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())]
    for kind, (right, n) in [*counts.items(), ("all", total)]:
        print(f"{kind:<12} {right:>6} {n:>4} {100 * right / n:>6.1f}%")
    if args.misses:
        for case, why in misses:
            print(f"- {case['kind']} {case['name']!r}: {'; '.join(why)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
