"""Files in and out: rubrics, items, taxonomies, verdicts, HealthBench JSONL, Autorubric files.

The public API every other part of Assay reads files through, one reader per kind of file:

- :func:`iter_items` / :func:`load_items` / :func:`write_items`: items from item JSONL,
  HealthBench JSONL (detected per file), JSON or YAML; streamed line by line.
- :func:`read_rubric` / :func:`write_rubric`: one rubric: an Assay rubric document, an
  Autorubric list, or a taxonomy's leaves.
- :func:`read_rubric_file`: the rubrics that apply to verdicts: one shared rubric, or each
  item's own from an item file (:mod:`assay.io.rubric_files`).
- :func:`read_verdicts` / :func:`iter_verdicts` / :func:`write_verdicts`: verdict JSONL.
- :func:`read_labels`: human labels (verdict JSONL or an Autorubric dataset).
- :func:`read_taxonomy` / :func:`write_taxonomy`: criterion trees.
- :func:`validate_file`: every problem in any supported file, in one pass.
- :mod:`assay.io.healthbench`: ``read_examples``, ``example_to_item``,
  ``item_to_example`` (lossless).
- :func:`schema`: JSON Schemas for ``assay schema``.

Every problem is an :class:`assay.errors.Issue` naming file, line and field, e.g.
``dev.jsonl:17: rubrics[3].points: expected a number, got "eight"``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Light, and named like its module: imported now so that ``assay.io.schema`` is the function.
from assay.io.schema import schema

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ imports on first use
    from assay.io import healthbench as healthbench
    from assay.io.documents import read_rubric as read_rubric
    from assay.io.documents import read_taxonomy as read_taxonomy
    from assay.io.documents import write_rubric as write_rubric
    from assay.io.documents import write_taxonomy as write_taxonomy
    from assay.io.formats import FileFormat as FileFormat
    from assay.io.formats import detect_format as detect_format
    from assay.io.items import dump_item as dump_item
    from assay.io.items import iter_items as iter_items
    from assay.io.items import load_items as load_items
    from assay.io.items import write_items as write_items
    from assay.io.labels import LabelFile as LabelFile
    from assay.io.labels import read_labels as read_labels
    from assay.io.rubric_files import RubricFile as RubricFile
    from assay.io.rubric_files import read_rubric_file as read_rubric_file
    from assay.io.validate import check_file as check_file
    from assay.io.validate import validate_file as validate_file
    from assay.io.verdicts import iter_verdicts as iter_verdicts
    from assay.io.verdicts import read_verdicts as read_verdicts
    from assay.io.verdicts import write_verdicts as write_verdicts

# Each name's module, imported on first use: reading one kind of file (e.g. the items of
# `assay grade`) does not load the readers of every other kind (YAML, Autorubric, schemas).
_LAZY = {
    "FileFormat": "assay.io.formats",
    "LabelFile": "assay.io.labels",
    "RubricFile": "assay.io.rubric_files",
    "check_file": "assay.io.validate",
    "detect_format": "assay.io.formats",
    "dump_item": "assay.io.items",
    "iter_items": "assay.io.items",
    "iter_verdicts": "assay.io.verdicts",
    "load_items": "assay.io.items",
    "read_labels": "assay.io.labels",
    "read_rubric": "assay.io.documents",
    "read_rubric_file": "assay.io.rubric_files",
    "read_taxonomy": "assay.io.documents",
    "read_verdicts": "assay.io.verdicts",
    "validate_file": "assay.io.validate",
    "write_items": "assay.io.items",
    "write_rubric": "assay.io.documents",
    "write_taxonomy": "assay.io.documents",
    "write_verdicts": "assay.io.verdicts",
}


def __getattr__(name: str) -> Any:
    if name == "healthbench":
        return importlib.import_module("assay.io.healthbench")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.io' has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(module), name)
    return value


__all__ = [
    "FileFormat",
    "LabelFile",
    "RubricFile",
    "check_file",
    "detect_format",
    "dump_item",
    "healthbench",
    "iter_items",
    "iter_verdicts",
    "load_items",
    "read_labels",
    "read_rubric",
    "read_rubric_file",
    "read_taxonomy",
    "read_verdicts",
    "schema",
    "validate_file",
    "write_items",
    "write_rubric",
    "write_taxonomy",
    "write_verdicts",
]
