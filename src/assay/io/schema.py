"""JSON Schemas of the files Assay reads, generated from the pydantic models.

Example:
    >>> schema("rubric")["title"]
    'Rubric'
    >>> sorted(SCHEMAS)
    ['healthbench', 'item', 'rubric', 'taxonomy', 'verdict']
"""

from __future__ import annotations

import importlib
from typing import Any

SCHEMAS: dict[str, tuple[str, str]] = {
    "rubric": ("assay.rubric.rubric", "Rubric"),
    "item": ("assay.item", "Item"),
    "taxonomy": ("assay.rubric.taxonomy", "Taxonomy"),
    "verdict": ("assay.verdict", "Verdict"),
    "healthbench": ("assay.io.healthbench", "HealthBenchExample"),
}


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) for ``name``: one of :data:`SCHEMAS`.

    Schemas describe what a file may contain (validation mode), so aliases such as a
    criterion's ``requirement`` / ``points`` are not listed; the canonical names are.
    """
    try:
        module, model = SCHEMAS[name]
    except KeyError:
        raise ValueError(f"unknown schema {name!r}; choose one of {', '.join(SCHEMAS)}") from None
    result = getattr(importlib.import_module(module), model).model_json_schema(mode="validation")
    result.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    return result
