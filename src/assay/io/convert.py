"""Convert between file formats (behind ``assay convert``): items <-> HealthBench, rubrics <->
Autorubric, Autorubric datasets <-> items + label files.

Example:
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "list.json").write_text(json.dumps(
    ...     [{"name": "dose", "weight": 4, "requirement": "Gives a dose."}]))
    >>> convert_file(folder / "list.json", folder / "rubric.yaml", None)  # doctest: +ELLIPSIS
    'wrote a rubric of 1 criteria (rubric) to .../rubric.yaml'
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assay.errors import InputError, Issue
from assay.io import (
    detect_format,
    iter_items,
    read_rubric,
    read_taxonomy,
    write_items,
    write_rubric,
    write_taxonomy,
)

if TYPE_CHECKING:
    from assay.verdict import Verdict

# Typed as tuples of literals so that `x in _ITEM_KINDS` narrows a format name for mypy.
_ITEM_KINDS: tuple[Literal["items"], Literal["healthbench"]] = ("items", "healthbench")
_RUBRIC_KINDS: tuple[Literal["rubric"], Literal["autorubric"]] = ("rubric", "autorubric")
DATASET: Literal["autorubric-dataset"] = "autorubric-dataset"


def convert_file(source: str | Path, target: str | Path, to: str | None, *,
                 labels: str | Path | list[Verdict] | None = None,
                 rubric: str | Path | None = None) -> str:
    """Convert ``source`` into ``target``; returns a one-line summary, raises InputError.

    Autorubric datasets (see :mod:`.autorubric_dataset_convert`) also use ``labels`` (the label
    file written, or read, or the labels themselves) and ``rubric`` (a shared rubric file
    written, or read).
    """
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise InputError(Issue(str(source), None, None, "no such file"))
    kind = detect_format(source).kind
    to = to or _default_target(kind)
    if DATASET in (kind, to):
        from assay.io.autorubric_dataset_convert import convert_dataset

        if kind not in (*_ITEM_KINDS, DATASET) or to not in (*_ITEM_KINDS, DATASET):
            raise InputError(Issue(str(source), None, None,
                                   f"cannot convert a {kind} file to {to!r}"))
        return convert_dataset(source, kind, target, to, labels=labels, rubric=rubric,
                               atomic=_atomic)
    if labels is not None or rubric is not None:
        raise InputError(Issue(None, None, "--labels/--rubric",
                               "only used when converting to or from an Autorubric dataset"))
    if kind in _ITEM_KINDS and to in _ITEM_KINDS:
        issues: list[Issue] = []
        count = _atomic(target, lambda tmp: write_items(
            iter_items(source, issues=issues, format=kind), tmp, format=to), issues)
        return f"wrote {count} {'HealthBench examples' if to == 'healthbench' else 'items'} to {target}"
    if kind in _RUBRIC_KINDS and to in _RUBRIC_KINDS:
        read = read_rubric(source)
        _atomic(target, lambda tmp: write_rubric(read, tmp, format=to), [])
        return f"wrote a rubric of {len(read.criteria)} criteria ({to}) to {target}"
    if kind == "taxonomy" and to == "taxonomy":
        taxonomy = read_taxonomy(source)
        _atomic(target, lambda tmp: write_taxonomy(taxonomy, tmp), [])
        return f"wrote taxonomy {taxonomy.id!r} to {target}"
    if kind == "taxonomy" and to in _RUBRIC_KINDS:
        leaves = read_taxonomy(source).to_rubric()
        _atomic(target, lambda tmp: write_rubric(leaves, tmp, format=to), [])
        return f"wrote the {len(leaves.criteria)} leaves of the taxonomy, auto-weighted, to {target}"
    raise InputError(Issue(str(source), None, None, f"cannot convert a {kind} file to {to!r}"))


def _default_target(kind: str) -> str:
    if kind in (*_ITEM_KINDS, DATASET):
        return "items"
    return "rubric" if kind in _RUBRIC_KINDS else kind


def _atomic(target: Path, write, issues: list[Issue]):
    """Write into a temporary file next to ``target`` and move it in only if all went well."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.",
                                suffix=target.suffix)
    os.close(fd)
    try:
        result = write(name)
        if issues:
            raise InputError(issues)
        os.replace(name, target)
        return result
    finally:
        if os.path.exists(name):
            os.unlink(name)
