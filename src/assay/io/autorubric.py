"""Autorubric-style rubric lists: ``[{name?, weight, requirement, options?, scale_type?}]``.

Autorubric (delip/autorubric) writes a rubric as a JSON or YAML list of criteria. ``weight``
defaults to 10.0; a criterion with ``options`` is multi-choice, ``scale_type`` ``ordinal``
(default) or ``nominal``; options are ``{label, value, na?}``. ``name`` becomes the criterion
id (derived from the text when absent) and a per-criterion ``aggregation`` override is kept in
the criterion's metadata.

Example:
    >>> rubric = to_rubric([
    ...     {"name": "stinger", "weight": 8, "requirement": "Explains stinger removal."},
    ...     {"requirement": "How clear is the answer?", "options": [
    ...         {"label": "unclear", "value": 0}, {"label": "clear", "value": 1}]}], id="bee")
    >>> [(c.id, c.weight, c.kind.value) for c in rubric.criteria]  # doctest: +ELLIPSIS
    [('stinger', 8.0, 'binary'), ('c-...', 10.0, 'ordinal')]
    >>> from_rubric(rubric)[0]
    {'name': 'stinger', 'weight': 8.0, 'requirement': 'Explains stinger removal.'}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from assay.errors import InputError
from assay.io.errors import Loc, issues_from
from assay.rubric.criterion import Criterion
from assay.rubric.rubric import Rubric

DEFAULT_WEIGHT = 10.0
_FIELD_NAMES: dict[str | int, str] = {"text": "requirement", "id": "name", "kind": "scale_type"}


def is_autorubric_list(document: Any) -> bool:
    """A non-empty list whose entries look like Autorubric criteria."""
    return (isinstance(document, list) and bool(document) and isinstance(document[0], dict)
            and "requirement" in document[0])


def to_rubric(
    entries: Any,
    *,
    id: str = "rubric",
    source: str | None = None,
    line_of: Callable[[Loc], int | None] | None = None,
) -> Rubric:
    """A :class:`Rubric` from an Autorubric list; problems raise :class:`InputError` with
    Autorubric's field names (``[2].requirement``)."""
    if not isinstance(entries, list):
        raise InputError(f"{source or '<input>'}: an Autorubric rubric is a list of criteria")
    criteria = [_criterion_fields(e) for e in entries]
    try:
        return Rubric.model_validate({"id": id, "criteria": criteria})
    except ValidationError as exc:
        raise InputError(
            issues_from(exc, source=source, rename=_rename, line_of=line_of)
        ) from None


def from_rubric(rubric: Rubric) -> list[dict[str, Any]]:
    """The Autorubric list for a rubric (guidelines, tags and provenance are not representable)."""
    return [criterion_entry(criterion) for criterion in rubric.criteria]


def criterion_entry(criterion: Criterion) -> dict[str, Any]:
    """One criterion as an Autorubric list entry."""
    entry: dict[str, Any] = {"name": criterion.id, "weight": criterion.weight,
                             "requirement": criterion.text}
    if criterion.is_multi_choice:
        entry["scale_type"] = criterion.kind.value
        entry["options"] = [o.model_dump(exclude_defaults=True) for o in criterion.options]
    if "aggregation" in criterion.metadata:
        entry["aggregation"] = criterion.metadata["aggregation"]
    return entry


def criterion_from_entry(entry: dict[str, Any]) -> Criterion:
    """One Autorubric list entry as a :class:`Criterion` (pydantic's ValidationError if bad)."""
    return Criterion.model_validate(_criterion_fields(entry))


def _criterion_fields(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry  # let validation report "expected an object"
    fields = {_ASSAY_NAMES.get(k, k): v for k, v in entry.items() if k != "aggregation"}
    fields.setdefault("weight", DEFAULT_WEIGHT)
    if "options" in entry:
        fields.setdefault("kind", "ordinal")
    if "aggregation" in entry:
        fields["metadata"] = {"aggregation": entry["aggregation"]}
    return fields


_ASSAY_NAMES = {"requirement": "text", "name": "id", "scale_type": "kind"}


def _rename(loc: Loc) -> Loc:
    if len(loc) >= 2 and loc[0] == "criteria":
        field = loc[2] if len(loc) > 2 else None
        tail = (_FIELD_NAMES.get(field, field), *loc[3:]) if field is not None else ()
        return (loc[1], *tail)
    return ()
