"""Human labels kept with a run: ``RUN/labels.jsonl``, one verdict per (item, criterion).

A run graded from a labelled file (an Autorubric dataset's ``ground_truth``) stores those
labels next to its verdicts, so ``assay agreement RUN`` needs nothing else. The file is the
verdict JSONL format, so any tool that reads labels reads it.

Example:
    >>> import tempfile, pathlib
    >>> from assay.verdict import Verdict
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> store_labels(run, [Verdict(item_id="q1", criterion_id="c", verdict="MET",
    ...                            judge="ground_truth")]).name
    'labels.jsonl'
    >>> [v.verdict.value for v in read_run_labels(run)]
    ['MET']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from assay.verdict import Verdict, read_verdicts, write_verdicts

LABELS_FILE = "labels.jsonl"


def labels_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / LABELS_FILE


def store_labels(run_dir: str | Path, labels: Sequence[Verdict]) -> Path | None:
    """Write ``labels`` into the run (once: an existing file is kept); None when there are none."""
    path = labels_path(run_dir)
    if not labels:
        return None
    if not path.exists():
        partial = path.with_name(f".{LABELS_FILE}.partial")
        write_verdicts(labels, partial)
        os.replace(partial, path)
    return path


def read_run_labels(run_dir: str | Path) -> list[Verdict] | None:
    """The labels stored with a run, or None if it has none."""
    path = labels_path(run_dir)
    return read_verdicts(path) if path.is_file() else None
