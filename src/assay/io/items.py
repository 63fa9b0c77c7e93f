"""Items in and out: Assay item JSONL/JSON/YAML and HealthBench JSONL, streamed.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> items = [Item(id="q1", prompt="Bee sting?", response="Scrape it out.")]
    >>> write_items(items, folder / "items.jsonl")
    1
    >>> [i.id for i in iter_items(folder / "items.jsonl")]
    ['q1']
    >>> _ = (folder / "bad.jsonl").write_text('{"id": "q1"}\\n{"id": "q2", "prompt": "Hi"}\\n')
    >>> issues = []
    >>> [i.id for i in iter_items(folder / "bad.jsonl", issues=issues)], [str(i) for i in issues]
    (['q2'], ['.../bad.jsonl:1: messages: required field is missing'])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import InputError, Issue
from assay.io import healthbench
from assay.io.duplicates import duplicate_warnings
from assay.io.errors import Loc, field_path, issues_from
from assay.io.formats import FileFormat, Kind, classify_document, detect_format, syntax_of
from assay.io.jsonl import iter_jsonl, write_jsonl
from assay.io.yaml_json import dump_document, line_finder, load_document
from assay.item import Item
from assay.rubric.rubric import Rubric


def iter_items(
    path: str | Path,
    *,
    issues: list[Issue] | None = None,
    format: Kind | None = None,
    warnings: list[Issue] | None = None,
    require_rubric: bool = False,
) -> Iterator[Item]:
    """Stream the items of a file: item JSONL, HealthBench JSONL, a JSON/YAML document, or an
    Autorubric dataset (:mod:`assay.io.autorubric_dataset`; its labels are not items).

    With ``issues`` given, every bad record is appended there (all its problems, with file,
    line and field) and skipped, and reading goes on; without it the first bad record raises
    :class:`InputError`. Item ids must be unique within a file. JSONL files are read one line at
    a time, so memory does not grow with the file (beyond the set of ids seen). With
    ``warnings`` given, criteria an item's rubric states twice are listed there (they are kept
    and graded; see :func:`~assay.io.duplicates.duplicate_warnings`). With ``require_rubric``, an
    item without its own rubric is a bad record (an item file read as rubrics).
    """
    source = str(path)
    seen: dict[str, int | None] = {}
    warned: set[tuple[str, tuple[str, ...]]] = set()
    for line, where, record in _records(path, format):
        problems: list[Issue]
        if isinstance(record, Issue):
            problems = [record]
        else:
            try:
                item = _to_item(record, source, line, where)
            except InputError as exc:
                problems = exc.issues
            else:
                problems = _refused(item, where, source, line, seen, require_rubric)
                if not problems:
                    seen[item.id] = line if line is not None else _line_of(where)
                    if warnings is not None and item.rubric is not None:
                        found = _duplicate_criteria(item.rubric, where, source, seen[item.id])
                        shared = (item.rubric.id, tuple(c.id for c in item.rubric.criteria))
                        if found and shared not in warned:  # a shared rubric: warn once
                            warned.add(shared)
                            warnings.extend(found)
                    yield item
                    continue
        if issues is None:
            raise InputError(problems)
        issues.extend(problems)


def load_items(
    path: str | Path, *, format: Kind | None = None, require_rubric: bool = False
) -> list[Item]:
    """Every item of a file; raises one :class:`InputError` listing ALL problems."""
    issues: list[Issue] = []
    items = list(iter_items(path, issues=issues, format=format, require_rubric=require_rubric))
    if issues:
        raise InputError(issues)
    return items


def write_items(
    items: Iterable[Item], path: str | Path, *, format: Kind | None = None
) -> int:
    """Write items by extension: ``.jsonl`` one item per line (HealthBench lines with
    ``format="healthbench"``), ``.json``/``.yaml`` a list. Returns the number written."""
    syntax = syntax_of(path)
    as_healthbench = format == "healthbench"
    if format not in (None, "items", "healthbench"):
        raise InputError(f"cannot write items as {format!r}; use 'items' or 'healthbench'")
    records = (healthbench.item_to_example(i) if as_healthbench else dump_item(i) for i in items)
    if syntax == "jsonl":
        return write_jsonl(records, path, ascii_json=as_healthbench)
    documents = list(records)
    dump_document(documents, path)
    return len(documents)


def dump_item(item: Item) -> dict[str, Any]:
    """The compact JSON form of an item (defaults left out; reading it back gives ``item``)."""
    return item.model_dump(mode="json", exclude_defaults=True)


# -- internals --------------------------------------------------------------------------------

def _records(path: str | Path, kind: Kind | None) -> Iterator[tuple[int | None, Any, Any]]:
    """``(line, where, record)``: ``where`` is ``(kind, prefix, line_of)`` for the converter."""
    syntax = syntax_of(path)
    if syntax == "jsonl":
        file_format = FileFormat(kind, "jsonl") if kind else detect_format(path)
        for line, value in iter_jsonl(path, source=str(path)):
            yield line, (file_format.kind, (), None), value
        return
    try:
        document = load_document(path)
    except InputError as exc:
        for issue in exc.issues:
            yield issue.line, None, issue
        return
    kind = kind or classify_document(document)
    line_of = line_finder(path)
    if kind == "autorubric-dataset":
        yield from _dataset_records(document, path, line_of)
        return
    prefix: Loc | None
    if kind == "items" and isinstance(document, dict) and "items" in document:
        entries, prefix = document["items"], ("items",)
    elif isinstance(document, list):
        entries, prefix = document, ()
    elif kind in ("items", "healthbench") and isinstance(document, dict):
        entries, prefix = [document], None  # a single item
    else:
        yield None, None, Issue(str(path), None, None, f"expected items, found a {kind} file")
        return
    if not isinstance(entries, list):
        yield line_of(("items",)), None, Issue(str(path), line_of(("items",)), "items",
                                               "expected a list of items")
        return
    for index, entry in enumerate(entries):
        where_prefix = () if prefix is None else (*prefix, index)
        yield None, (kind, where_prefix, line_of), entry


def _dataset_records(document: Any, path: str | Path, line_of) -> Iterator[tuple[int | None, Any, Any]]:
    """An Autorubric dataset's items (already converted) and its problems, in file order."""
    from assay.io.autorubric_dataset import parse_dataset

    data = parse_dataset(document, source=str(path), line_of=line_of,
                         default_name=Path(path).stem)
    for issue in data.issues:
        yield issue.line, None, issue
    for entry in data.entries:
        for issue in entry.issues:
            yield issue.line, None, issue
        if entry.item is not None and not entry.issues:
            yield None, ("items", ("items", entry.index), line_of), entry.item


def _to_item(record: Any, source: str, line: int | None, where: Any) -> Item:
    kind, prefix, line_of = where
    if kind == "healthbench":
        line = line if line is not None else _line_of(where)
        return healthbench.example_to_item(record, source=source, line=line)
    try:
        return Item.model_validate(record)
    except ValidationError as exc:
        raise InputError(
            issues_from(exc, source=source, line=line, prefix=prefix, line_of=line_of)
        ) from None


def _line_of(where: Any) -> int | None:
    _, prefix, line_of = where
    return line_of(prefix) if line_of is not None else None


def _duplicate_criteria(rubric: Rubric, where: Any, source: str, line: int | None) -> list[Issue]:
    kind, prefix, _ = where
    healthbench_row = kind == "healthbench"
    return duplicate_warnings(rubric, source=source, line=line, healthbench=healthbench_row,
                              prefix=prefix if healthbench_row else (*prefix, "rubric"))


def _refused(item: Item, where: Any, source: str, line: int | None,
             seen: dict[str, int | None], require_rubric: bool) -> list[Issue]:
    """Why a valid item is still a bad record of this file: a repeated id, a missing rubric."""
    if item.id in seen:
        return [_duplicate(item, where, source, line, seen[item.id])]
    if require_rubric and item.rubric is None:
        _, prefix, _ = where
        return [Issue(source, line if line is not None else _line_of(where),
                      field_path((*prefix, "rubric")),
                      "the item has no rubric (every item of a file read as rubrics needs one)")]
    return []


def _duplicate(item: Item, where: Any, source: str, line: int | None, first: int | None) -> Issue:
    kind, prefix, _ = where
    field = "prompt_id" if kind == "healthbench" else "id"
    line = line if line is not None else _line_of(where)
    earlier = f" (first on line {first})" if first is not None else ""
    return Issue(source, line, field_path((*prefix, field)), f"duplicate {field} {item.id!r}{earlier}")
