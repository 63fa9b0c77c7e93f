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

from assay.io import healthbench
from assay.io.documents import read_rubric, read_taxonomy, write_rubric, write_taxonomy
from assay.io.formats import FileFormat, detect_format
from assay.io.items import dump_item, iter_items, load_items, write_items
from assay.io.labels import LabelFile, read_labels
from assay.io.rubric_files import RubricFile, read_rubric_file
from assay.io.schema import schema
from assay.io.validate import check_file, validate_file
from assay.io.verdicts import iter_verdicts, read_verdicts, write_verdicts

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
