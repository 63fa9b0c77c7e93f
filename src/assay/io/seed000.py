"""Seed 000's shared rubric file as released: ``generic_rubrics.jsonl`` is one JSON list of
``{criterion, axis, points}`` with trailing commas (the authors read it with
``ast.literal_eval``), despite its ``.jsonl`` name.

Example:
    >>> without_trailing_commas('[{"a": "x, ]",}, ]')
    '[{"a": "x, ]"} ]'
    >>> rubric = released_rubric([{"criterion": "Is safe.", "axis": "safety", "points": 3}], "g")
    >>> [(c.id, c.text, c.weight, c.axis) for c in rubric.criteria]
    [('c1', 'Is safe.', 3.0, 'safety')]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import InputError
from assay.io.errors import issues_from
from assay.rubric.rubric import Rubric

_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(\s*[}\]])')


def without_trailing_commas(text: str) -> str:
    """JSON text with the commas before a closing bracket removed (never inside a string)."""
    return _STRING_OR_TRAILING_COMMA.sub(
        lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)


def load_whole_json(path: Path) -> Any:
    """The file as one JSON value (trailing commas allowed), or None if it is not one (e.g. a
    JSONL file of several lines)."""
    import orjson

    text = path.read_bytes()
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    if not text.lstrip().startswith((b"[", b"{")):
        return None
    try:
        return orjson.loads(without_trailing_commas(text.decode("utf-8", errors="replace")))
    except orjson.JSONDecodeError:
        return None


def is_released_rubric(document: Any) -> bool:
    """A non-empty list of objects with ``criterion`` and ``points`` (seed 000's entries)."""
    return (isinstance(document, list) and bool(document)
            and all(isinstance(e, dict) and "criterion" in e and "points" in e for e in document))


def released_rubric(entries: list[dict[str, Any]], id: str, source: str | None = None) -> Rubric:
    """The entries as a rubric: ids ``c1``, ``c2``, ... in order, ``points`` as weights."""
    try:
        return Rubric.model_validate({"id": id, "criteria": [
            {"id": f"c{i}", "text": e["criterion"], "weight": e["points"],
             "axis": e.get("axis") or None} for i, e in enumerate(entries, start=1)]})
    except ValidationError as exc:
        raise InputError(issues_from(exc, source=source)) from None
