"""Rubrics and taxonomies as YAML/JSON documents (and rubrics as Autorubric lists).

Example:
    >>> import tempfile, pathlib
    >>> from assay.rubric import Rubric
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bee.yaml"
    >>> rubric = Rubric(id="bee", criteria=[{"id": "scrape", "text": "Scrape it.", "weight": 5}])
    >>> write_rubric(rubric, path)
    >>> read_rubric(path) == rubric
    True
    >>> write_rubric(rubric, path, format="autorubric")
    >>> read_rubric(path).criteria[0].id
    'scrape'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from assay.errors import InputError, Issue
from assay.io import autorubric, seed000
from assay.io.errors import issues_from
from assay.io.formats import classify_document, syntax_of
from assay.io.taxonomy_check import taxonomy_errors
from assay.io.yaml_json import dump_document, line_finder, load_document
from assay.rubric.rubric import Rubric
from assay.rubric.taxonomy import Taxonomy


def read_rubric(path: str | Path) -> Rubric:
    """A rubric from a YAML/JSON Assay rubric, an Autorubric-style list of criteria, or a
    taxonomy (all its leaves, weighted by the tree: :meth:`Taxonomy.to_rubric`).

    An Autorubric list takes the file name (without extension) as the rubric id, and so does
    seed 000's released shared rubric (``generic_rubrics.jsonl``: one JSON list of
    ``{criterion, axis, points}`` with trailing commas, see :mod:`assay.io.seed000`).
    """
    if syntax_of(path) == "jsonl":
        whole = seed000.load_whole_json(Path(path))
        if seed000.is_released_rubric(whole):
            return seed000.released_rubric(whole, Path(path).stem, str(path))
    document = _document(path, "rubric")
    if seed000.is_released_rubric(document):
        return seed000.released_rubric(document, Path(path).stem, str(path))
    kind = classify_document(document)
    if kind == "taxonomy":
        return _taxonomy(document, path).to_rubric()
    if kind == "autorubric":
        return autorubric.to_rubric(document, id=Path(path).stem, source=str(path),
                                    line_of=line_finder(path))
    return _validate(Rubric, document, path)


def write_rubric(
    rubric: Rubric, path: str | Path, *, format: Literal["rubric", "autorubric"] = "rubric"
) -> None:
    """Write a rubric as an Assay rubric document, or as an Autorubric list."""
    if format == "autorubric":
        dump_document(autorubric.from_rubric(rubric), path)
    else:
        dump_document(rubric.model_dump(mode="json", exclude_defaults=True), path)


def read_taxonomy(path: str | Path) -> Taxonomy:
    """A taxonomy (criterion tree) from a YAML/JSON document ``{id, root: {...}}``.

    Every problem that would make a grade wrong is refused at once, each with its line and
    field (:func:`~assay.io.taxonomy_check.taxonomy_errors`).
    """
    return _taxonomy(_document(path, "taxonomy"), path)


def _taxonomy(document: Any, path: str | Path) -> Taxonomy:
    issues = taxonomy_errors(document, source=str(path), line_of=line_finder(path))
    if issues:
        raise InputError(issues)
    return _validate(Taxonomy, document, path)


def write_taxonomy(taxonomy: Taxonomy, path: str | Path) -> None:
    dump_document(taxonomy.model_dump(mode="json", exclude_defaults=True), path)


def _document(path: str | Path, wanted: str) -> Any:
    if syntax_of(path) == "jsonl":
        raise InputError(Issue(str(path), None, None,
                               f"a {wanted} is a YAML or JSON document, not JSONL"))
    return load_document(path)


def _validate(model: type[BaseModel], document: Any, path: str | Path) -> Any:
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise InputError(
            issues_from(exc, source=str(path), line_of=line_finder(path))
        ) from None
