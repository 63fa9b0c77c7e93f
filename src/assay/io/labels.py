"""Human-label files: the one reader behind ``assay agreement --labels`` and ``assay convert
--labels``.

A label file is a verdict JSONL file (one label per line, ``judge`` naming the rater) or an
Autorubric dataset, whose ``ground_truth`` are the labels and whose rubrics then say each
criterion's kind, options and weight. (A run directory's labels are the run store's business:
:func:`assay.metrics.label_sources.labels_for`.)

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.jsonl"
    >>> _ = path.write_text('{"item_id": "q", "criterion_id": "a", "verdict": "MET", '
    ...                     '"judge": "dr-a"}\\n')
    >>> found = read_labels(path)
    >>> [v.judge for v in found.labels], found.rubrics
    (['dr-a'], None)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.io.verdicts import read_verdicts
from assay.rubric.rubric import Rubric
from assay.verdict import Verdict

DOCUMENT_SUFFIXES = (".json", ".yaml", ".yml")


@dataclass(frozen=True)
class LabelFile:
    """The labels of a file and, for a dataset, each item's rubric (else None)."""

    labels: list[Verdict]
    rubrics: dict[str, Rubric] | None = None


def read_labels(path: str | Path) -> LabelFile:
    """The human labels of a verdict JSONL file or an Autorubric dataset."""
    path = Path(path)
    if path.is_file() and path.suffix.lower() in DOCUMENT_SUFFIXES:
        from assay.io.autorubric_dataset import KIND, read_dataset
        from assay.io.formats import detect_format

        if detect_format(path).kind == KIND:
            data = read_dataset(path)
            return LabelFile(data.labels, {i.id: i.rubric for i in data.items if i.rubric})
    return LabelFile(read_verdicts(path))
