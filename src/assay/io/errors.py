"""Turn pydantic validation errors into :class:`~assay.errors.Issue` records users can act on.

Pydantic reports a location as a tuple such as ``("rubric", "criteria", 3, "weight")``; readers
print it as a field path (``rubric.criteria[3].weight``), optionally renamed into the vocabulary
of the file being read (``rubrics[3].points`` in a HealthBench file), and replace pydantic's
generic wording with a short message that shows the offending value.

Model-level validators of the data model may attach ``ctx["loc"]`` (a location relative to the
model) to a ``PydanticCustomError``; it is appended here so that, for example, a duplicate
criterion id points at the duplicate entry rather than at the whole rubric.

Example:
    >>> field_path(("rubrics", 3, "points"))
    'rubrics[3].points'
    >>> field_path((3, "weight"))
    '[3].weight'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from assay.errors import Issue

Loc = tuple[str | int, ...]
Renamer = Callable[[Loc], Loc]

_NUMBER = {"float_type", "float_parsing", "int_type", "int_parsing", "int_from_float",
           "finite_number", "number_type"}
_STRING = {"string_type", "string_unicode"}
_LIST = {"list_type", "tuple_type", "iterable_type"}
_OBJECT = {"dict_type", "model_type", "model_attributes_type", "dataclass_type"}
_BOOL = {"bool_type", "bool_parsing"}


def field_path(loc: Sequence[str | int]) -> str:
    """``("rubrics", 3, "points")`` -> ``"rubrics[3].points"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def show(value: Any, limit: int = 60) -> str:
    """A short JSON rendering of a bad value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(error: Mapping[str, Any]) -> str:
    """A short message for one pydantic error dict (``ValidationError.errors()`` entry)."""
    kind = error["type"]
    got = show(error.get("input"))
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required field is missing"
    if kind in _NUMBER:
        return f"expected a number, got {got}"
    if kind in _STRING:
        return f"expected a string, got {got}"
    if kind in _LIST:
        return f"expected a list, got {got}"
    if kind in _OBJECT:
        return f"expected an object, got {got}"
    if kind in _BOOL:
        return f"expected true or false, got {got}"
    if kind in ("too_short", "string_too_short"):
        return "must not be empty" if ctx.get("min_length") == 1 else error["msg"].lower()
    if kind in ("literal_error", "enum"):
        field = error["loc"][-1] if error["loc"] else "value"
        return f"unknown {field} {got}, expected {ctx.get('expected', '?')}"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    return str(error["msg"])


def error_loc(error: Mapping[str, Any]) -> Loc:
    """The error's location, extended by the ``ctx["loc"]`` a model validator attached."""
    loc = tuple(error["loc"])
    extra = (error.get("ctx") or {}).get("loc")
    return loc + tuple(extra) if extra else loc


def issues_from(
    exc: ValidationError,
    *,
    source: str | None,
    line: int | None = None,
    prefix: Loc = (),
    rename: Renamer | None = None,
    line_of: Callable[[Loc], int | None] | None = None,
) -> list[Issue]:
    """One :class:`Issue` per pydantic error, with readable field paths.

    ``prefix`` is prepended to every location (e.g. ``(4,)`` for the fifth item of a list),
    ``rename`` maps model locations to the file's own field names, and ``line_of`` finds the
    line of a location in a YAML/JSON document (used when ``line`` is None).
    """
    issues = []
    for error in exc.errors(include_url=False):
        loc = prefix + error_loc(error)
        if rename is not None:
            loc = rename(loc)
        message = describe(error)
        if error["type"] == "duplicate_criterion_id":
            first = prefix + tuple(error["loc"]) + ("criteria", error["ctx"]["first"], "id")
            first = rename(first) if rename is not None else first
            message = f"duplicate criterion id {error['ctx']['id']!r} (same as {field_path(first)})"
        where = line if line is not None or line_of is None else line_of(loc)
        issues.append(Issue(source, where, field_path(loc) or None, message))
    return issues
