"""Files in and out: rubrics, items, taxonomies, HealthBench JSONL, Autorubric lists.

The public API every other part of Assay reads files through:

- :func:`iter_items` / :func:`load_items` / :func:`write_items`: items from item JSONL,
  HealthBench JSONL (detected per file), JSON or YAML; streamed line by line.
- :func:`read_rubric` / :func:`write_rubric`: Assay rubric documents or Autorubric lists.
- :func:`read_taxonomy` / :func:`write_taxonomy`: criterion trees.
- :func:`validate_file`: every problem in any supported file, in one pass.
- :mod:`assay.io.healthbench`: ``read_examples``, ``example_to_item``,
  ``item_to_example`` (lossless).
- :func:`schema`: JSON Schemas for ``assay schema``.

Every problem is an :class:`assay.errors.Issue` naming file, line and field, e.g.
``dev.jsonl:17: rubrics[3].points: expected a number, got "eight"``.
"""

from assay.io import healthbench
from assay.io.documents import read_rubric, read_taxonomy, write_rubric, write_taxonomy
from assay.io.formats import FileFormat, detect_format
from assay.io.items import dump_item, iter_items, load_items, write_items
from assay.io.schema import schema
from assay.io.validate import check_file, validate_file

__all__ = [
    "FileFormat",
    "check_file",
    "detect_format",
    "dump_item",
    "healthbench",
    "iter_items",
    "load_items",
    "read_rubric",
    "read_taxonomy",
    "schema",
    "validate_file",
    "write_items",
    "write_rubric",
    "write_taxonomy",
]
