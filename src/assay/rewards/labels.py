"""Reading the criteria an RL framework passes along with a sample (a dataset column, verl's
``ground_truth``, OpenRLHF's ``labels``).

Accepted, as Python values or as their JSON text:

* nothing (``None``, ``""``, ``"null"``): the scorer's own bank or selector decides;
* a list of criteria (``{"id", "text", "weight"}`` or HealthBench's ``{"criterion", "points",
  "tags"}``): instance-specific rewards, e.g. straight from a HealthBench row;
* ``{"rubrics": [...]}`` or ``{"criteria": [...]}``: the same, wrapped (a whole HealthBench row
  works);
* a list of ids (``["hs-02", "hs-08"]``): those criteria of the scorer's bank.

Example:
    >>> [c.weight for c in criteria_from_label('[{"criterion": "Says hi.", "points": -2}]')]
    [-2.0]
    >>> criteria_from_label("") is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from pydantic import ValidationError

from assay.errors import InputError, Issue
from assay.rubric import Criterion


def criteria_from_label(label: Any, bank: Sequence[Criterion] | None = None, *,
                        where: str = "label") -> tuple[Criterion, ...] | None:
    """The criteria a label names, or None when it names none (see the module docstring)."""
    if isinstance(label, bytes):
        label = label.decode()
    if isinstance(label, str):
        text = label.strip()
        if text in ("", "null", "None"):
            return None
        try:
            label = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise InputError(Issue(None, None, where, "expected JSON criteria, a list of bank "
                                   f"criterion ids or nothing, got {text[:60]!r}")) from None
    if label is None:
        return None
    if isinstance(label, dict):
        label = label.get("rubrics", label.get("criteria"))
        if label is None:
            raise InputError(Issue(None, None, where, 'a dict label needs "rubrics" or "criteria"'))
    if not isinstance(label, list) or not label:
        raise InputError(Issue(None, None, where, "expected a non-empty list of criteria"))
    if all(isinstance(x, str) for x in label):
        return _by_id(label, bank, where)
    out = []
    for i, entry in enumerate(label):
        try:
            out.append(Criterion.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise InputError(Issue(None, None, f"{where}[{i}].{field}".rstrip("."),
                                   first["msg"])) from None
    return tuple(out)


def _by_id(ids: list[str], bank: Sequence[Criterion] | None, where: str) -> tuple[Criterion, ...]:
    if not bank:
        raise InputError(Issue(None, None, where, "criterion ids need a bank (serve or score "
                               "with --bank)"))
    known = {c.id: c for c in bank}
    missing = [i for i in ids if i not in known]
    if missing:
        raise InputError(Issue(None, None, where, f"unknown criterion id(s) {missing[:5]}; the "
                               f"bank has {', '.join(list(known)[:5])}, ..."))
    return tuple(known[i] for i in ids)
