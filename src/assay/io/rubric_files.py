"""Rubric files: the one reader of "the rubrics that apply", whatever file holds them.

One rule for every command that takes a rubric file to score or compare verdicts with
(``assay score --rubric``, ``assay agreement/compare/meta ... --rubric``, ``assay review
RUBRIC``, ``assay fake-judge --rubric``), decided by the file's content (:func:`detect_format`),
never by its extension alone:

- an Assay rubric (YAML/JSON), an Autorubric list of criteria or a taxonomy (all its leaves):
  one rubric shared by every item;
- an item file (Assay items, HealthBench JSONL, an Autorubric dataset): each item's own rubric;
  an item without one is an error naming its line and field, never silently left out;
- a verdict file, or no file at all: an error.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "items.jsonl"
    >>> _ = path.write_text('{"id": "q1", "prompt": "Hi", "rubric": {"criteria": '
    ...                     '[{"id": "c", "text": "Greets."}]}}\\n{"id": "q2", "prompt": "Yo"}\\n')
    >>> read_rubric_file(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InputError: ...items.jsonl:2: rubric: the item has no rubric (every item ...)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from assay.errors import InputError, Issue
from assay.io.documents import read_rubric
from assay.io.formats import ITEM_KINDS, detect_format
from assay.io.items import load_items
from assay.item import Item
from assay.rubric.rubric import Rubric

SHARED_KINDS: tuple[str, ...] = ("rubric", "autorubric", "taxonomy")


@dataclass(frozen=True)
class RubricFile:
    """What a rubric file gives: one rubric ``shared`` by every item, or ``items`` that each
    carry their own (with their tags and responses, for HealthBench's theme breakdown and the
    length penalty). Which rubric scores which item is :class:`assay.scoring.ItemRubrics`'
    business: ``ItemRubrics(shared=found.shared, per_item=found.per_item)``."""

    source: str
    shared: Rubric | None = None
    items: tuple[Item, ...] = field(default=(), repr=False)

    @cached_property
    def per_item(self) -> dict[str, Rubric]:
        """Item id → its rubric (empty for a shared rubric)."""
        return {i.id: i.rubric for i in self.items if i.rubric is not None}

    @property
    def tags(self) -> dict[str, list[str]]:
        return {i.id: list(i.tags) for i in self.items}

    @property
    def responses(self) -> dict[str, str]:
        return {i.id: i.response for i in self.items if i.response is not None}


def read_rubric_file(path: str | Path) -> RubricFile:
    """The rubrics a file holds, by the rule of the module docstring; one :class:`InputError`
    lists every problem.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bee.yaml"
    >>> _ = path.write_text("id: bee\\ncriteria:\\n- {id: scrape, text: Scrape it., weight: 5}\\n")
    >>> found = read_rubric_file(path)
    >>> found.shared.id, found.per_item
    ('bee', {})
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such rubric file"))
    kind = detect_format(path).kind
    if kind in SHARED_KINDS:
        return RubricFile(str(path), shared=read_rubric(path))
    if kind in ITEM_KINDS:
        return RubricFile(str(path), items=tuple(load_items(path, format=kind,
                                                            require_rubric=True)))
    raise InputError(Issue(str(path), None, None,
                           f"a {kind} file holds no rubric: give a rubric, a taxonomy or an "
                           "item file whose items carry their rubrics"))
