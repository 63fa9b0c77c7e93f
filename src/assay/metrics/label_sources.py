"""Where ``assay agreement`` finds the human labels: ``--labels FILE`` or the run itself.

``--labels`` takes a verdict JSONL file (one label per line, ``judge`` naming the rater) or an
Autorubric dataset, whose ``ground_truth`` are the labels and whose rubrics then say each
criterion's kind, options and weight. Without ``--labels``, a run directory uses the labels
stored with it (``RUN/labels.sqlite``: reviewers' labels from ``assay review``, and the ground
truth of a dataset it was graded from).

Example:
    >>> import tempfile, pathlib
    >>> labels_for(pathlib.Path(tempfile.mkdtemp()), None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InputError: ...: --labels: no human labels: give --labels FILE, or label ...
"""

from __future__ import annotations

from pathlib import Path

from assay.metrics.sources import Rubrics
from assay.verdict import Verdict


def labels_for(source: str | Path, labels: str | Path | None) -> tuple[list[Verdict], Rubrics | None]:
    """``(labels, rubrics they bring)``: rubrics only when the labels are a dataset."""
    source = Path(source)
    if labels is None:
        from assay.metrics.sources import run_labels

        return run_labels(source), None
    path = Path(labels)
    if path.is_dir():  # another run: its judges' verdicts
        from assay.metrics.sources import verdicts_of

        return verdicts_of(path), None
    from assay.io.labels import read_labels

    found = read_labels(path)
    return found.labels, (Rubrics(per_item=found.rubrics) if found.rubrics is not None else None)
