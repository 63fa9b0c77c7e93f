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

from collections.abc import Iterable
from pathlib import Path

from assay.errors import InputError, Issue
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


def stored_labels(source: str | Path) -> list[Verdict]:
    """The human labels stored in a run directory (``RUN/labels.sqlite``); none for a verdict
    file or a run without any (:func:`assay.metrics.sources.run_labels` says why instead)."""
    from assay.review.labels import RunLabels

    source = Path(source)
    if not source.is_dir() or not RunLabels.exists(source):
        return []
    with RunLabels.open(source) as labels:
        return labels.verdicts()


def check_labels_match(labels: Iterable[Verdict], verdicts: Iterable[Verdict],
                       where: str | Path) -> None:
    """An :class:`InputError` naming ``where`` when no label is on an (item, criterion) that
    ``verdicts`` have: labels for other items (a wrong file) are never "0 pairs".

    >>> from assay.verdict import Verdict
    >>> label = Verdict(item_id="q9", criterion_id="c", decision="MET", judge="dr")
    >>> check_labels_match([label], [label.model_copy(update={"item_id": "q1"})], "l.jsonl")
    Traceback (most recent call last):
    ...
    assay.errors.InputError: l.jsonl: --labels: none of the 1 labels (on 1 items) is on an item and criterion of the verdicts (1 items; label items: q9)
    """
    labels = list(labels)
    keys = {(v.item_id, v.criterion_id) for v in verdicts}
    if not labels or any((v.item_id, v.criterion_id) in keys for v in labels):
        return
    items = sorted({v.item_id for v in labels})
    shown = ", ".join(items[:3]) + (", …" if len(items) > 3 else "")
    raise InputError(Issue(str(where), None, "--labels",
                           f"none of the {len(labels)} labels (on {len(items)} items) is on an "
                           f"item and criterion of the verdicts ({len({k[0] for k in keys})} "
                           f"items; label items: {shown})"))
