"""Verdict JSONL files: one :class:`~assay.verdict.Verdict` per line, in and out.

The one reader of the format: ``assay score``, the metrics, few-shot labels, ``assay convert``
and ``assay validate`` all read verdict files through :func:`iter_verdicts`, so a bad line gets
the same ``file:line: field: message`` everywhere.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "v.jsonl"
    >>> _ = path.write_text('{"item_id": "q", "criterion_id": "a", "verdict": "MET"}\\n'
    ...                     '{"item_id": "q", "criterion_id": "b", "verdict": "maybe"}\\n')
    >>> read_verdicts(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InputError: ...v.jsonl:2: verdict: unknown verdict "maybe", expected 'MET', ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from assay.errors import InputError, Issue
from assay.io.jsonl import iter_models, write_jsonl
from assay.verdict import Verdict


def iter_verdicts(path: str | Path, issues: list[Issue]) -> Iterator[Verdict]:
    """Every valid verdict of a JSONL file, streamed; each bad line adds its problems to
    ``issues`` and reading goes on."""
    for _, verdict in iter_models(path, Verdict, issues):
        yield verdict


def read_verdicts(path: str | Path) -> list[Verdict]:
    """Every verdict of a JSONL file; one :class:`InputError` lists every bad line.

    A run directory is not a verdict file: its votes are read by the run store
    (``assay score RUN``, :func:`assay.metrics.verdicts_of`).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.jsonl"
    >>> _ = p.write_text('{"item_id": "q", "criterion_id": "a", "verdict": "MET"}\\n')
    >>> [v.decision.value for v in read_verdicts(p)]
    ['MET']
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(Issue(str(path), None, None,
                               "is a directory, not a verdict JSONL file"))
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such verdict file"))
    issues: list[Issue] = []
    verdicts = list(iter_verdicts(path, issues))
    if issues:
        raise InputError(issues)
    return verdicts


def write_verdicts(verdicts: Iterable[Verdict], path: str | Path) -> int:
    """Write verdicts as JSONL (the format :func:`read_verdicts` reads); returns the count."""
    return write_jsonl((v.model_dump(mode="json", exclude_defaults=True) for v in verdicts), path)
