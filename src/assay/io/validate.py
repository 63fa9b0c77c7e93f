"""Validate any supported file in one pass and return every problem found.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"id": "r", "criteria": [{"text": "Warns.", "weight": -2}]}')
    >>> [str(i).split(": ", 1)[1] for i in validate_file(path)]
    ['criteria: the rubric has no criterion with a positive weight']
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import InputError, Issue
from assay.io.documents import read_rubric, read_taxonomy
from assay.io.duplicates import duplicate_warnings
from assay.io.formats import ITEM_KINDS, FileFormat, detect_format
from assay.io.items import iter_items
from assay.io.verdicts import iter_verdicts


def validate_file(path: str | Path) -> list[Issue]:
    """Every problem in ``path`` (items, HealthBench, rubric, Autorubric list or dataset,
    taxonomy or verdict JSONL).

    Item files are streamed: a bad line is reported and the next one read, so one run lists
    all problems of even a very large file.
    """
    return check_file(path)[1]


def check_file(
    path: str | Path, *, warnings: list[Issue] | None = None
) -> tuple[FileFormat | None, list[Issue], int]:
    """``(format, issues, number of valid records)`` for ``path`` (used by ``assay validate``).

    With ``warnings`` given, what is accepted but worth a look (a criterion stated twice in one
    rubric) is appended there.
    """
    path = Path(path)
    if not path.is_file():
        return None, [Issue(str(path), None, None, "no such file")], 0
    try:
        file_format = detect_format(path)
    except InputError as exc:
        return None, exc.issues, 0
    issues: list[Issue] = []
    if file_format.kind == "verdicts":
        return file_format, issues, sum(1 for _ in iter_verdicts(path, issues))
    if file_format.kind in ITEM_KINDS:
        count = sum(1 for _ in iter_items(path, issues=issues, format=file_format.kind,
                                          warnings=warnings))
        return file_format, issues, count
    try:
        if file_format.kind == "taxonomy":
            read_taxonomy(path)
        else:
            rubric = read_rubric(path)
            if warnings is not None:
                warnings.extend(duplicate_warnings(rubric, source=str(path)))
    except InputError as exc:
        return file_format, exc.issues, 0
    return file_format, issues, 1

