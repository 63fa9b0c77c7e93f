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
    from assay.io.autorubric_dataset import KIND, read_dataset
    from assay.io.formats import detect_format

    if path.is_file() and path.suffix.lower() in (".json", ".yaml", ".yml") and \
            detect_format(path).kind == KIND:
        data = read_dataset(path)
        return data.labels, Rubrics(per_item={i.id: i.rubric for i in data.items if i.rubric})
    from assay.metrics.sources import read_verdicts

    return read_verdicts(path), None
