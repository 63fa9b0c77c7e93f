"""Which kind of file is this? Detected from the extension, then from the content.

A *syntax* is how the file is written (``jsonl``, ``json``, ``yaml``); a *kind* is what it holds:

- ``healthbench``: HealthBench examples (lines with ``prompt_id`` / ``rubrics``);
- ``items``: Assay items (one per JSONL line, or a list / ``{items: [...]}`` document);
- ``rubric``: an Assay rubric (``{id, criteria, ...}``);
- ``autorubric``: an Autorubric-style list of criteria (entries with ``requirement``);
- ``autorubric-dataset``: an Autorubric dataset (``{name, prompt, rubric, items}``, items with
  ``submission`` and ``ground_truth``): items and their human labels;
- ``taxonomy``: a criterion tree (``{id, root}``);
- ``verdicts``: verdict JSONL (lines with ``item_id`` and ``criterion_id``; :mod:`assay.io.verdicts`).

JSONL files are sniffed from their first parseable line only, so detection never reads a large
file whole.

Example:
    >>> classify_document([{"requirement": "Says hi.", "weight": 3}])
    'autorubric'
    >>> classify_document({"id": "r", "criteria": []})
    'rubric'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from assay.errors import InputError, Issue
from assay.io.autorubric import is_autorubric_list
from assay.io.autorubric_dataset import is_autorubric_dataset
from assay.io.healthbench import is_healthbench
from assay.io.jsonl import first_record
from assay.io.yaml_json import YAML_SUFFIXES

Kind = Literal["healthbench", "items", "rubric", "autorubric", "autorubric-dataset", "taxonomy",
               "verdicts"]
Syntax = Literal["jsonl", "json", "yaml"]
KINDS: tuple[str, ...] = ("healthbench", "items", "rubric", "autorubric", "autorubric-dataset",
                          "taxonomy", "verdicts")
ITEM_KINDS: tuple[str, ...] = ("items", "healthbench", "autorubric-dataset")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class FileFormat:
    kind: Kind
    syntax: Syntax

    def __str__(self) -> str:
        return f"{self.kind} ({self.syntax})"


def syntax_of(path: str | Path) -> Syntax:
    """The syntax implied by the file extension; anything unknown raises :class:`InputError`."""
    suffix = Path(path).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix in YAML_SUFFIXES:
        return "yaml"
    raise InputError(Issue(str(path), None, None,
                           f"unsupported file type {suffix or '(none)'!r}: "
                           "expected .jsonl, .json, .yaml or .yml"))


def classify_document(document: Any) -> Kind:
    """The kind of a parsed YAML/JSON document."""
    if is_autorubric_list(document):
        return "autorubric"
    if isinstance(document, list):
        return "healthbench" if document and is_healthbench(document[0]) else "items"
    if isinstance(document, dict):
        if is_autorubric_dataset(document):
            return "autorubric-dataset"
        if "root" in document:
            return "taxonomy"
        if "criteria" in document:
            return "rubric"
        if is_healthbench(document):
            return "healthbench"
    return "items"


def classify_record(record: Any) -> Kind:
    """The kind of a JSONL file from one of its records."""
    if isinstance(record, dict) and "criterion_id" in record and "item_id" in record:
        return "verdicts"
    return "healthbench" if is_healthbench(record) else "items"


def detect_format(path: str | Path, document: Any = None) -> FileFormat:
    """The :class:`FileFormat` of ``path`` (pass ``document`` if it is already parsed)."""
    syntax = syntax_of(path)
    if syntax == "jsonl":
        return FileFormat(classify_record(first_record(path)), "jsonl")
    if document is None:
        from assay.io.yaml_json import load_document

        document = load_document(path)
    return FileFormat(classify_document(document), syntax)
