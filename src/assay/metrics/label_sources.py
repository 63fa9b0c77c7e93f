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

from pydantic import BaseModel, ConfigDict

from assay.errors import InputError, Issue
from assay.metrics.sources import Rubrics
from assay.verdict import Verdict

SHOWN_STRAYS = 5


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


class StrayLabels(BaseModel):
    """How many labels name an item the run does not have, or a criterion its item does not
    have (they take part in no figure), and the first few as ``item/criterion``."""

    model_config = ConfigDict(frozen=True)

    labels: int
    unknown_items: int
    unknown_criteria: int
    first: list[str]

    @property
    def count(self) -> int:
        return self.unknown_items + self.unknown_criteria

    def line(self) -> str:
        """What a reader sees before any figure.

        >>> StrayLabels(labels=4, unknown_items=1, unknown_criteria=1,
        ...             first=["q9/c", "q1/x"]).line()
        'labels: 2 of 4 name items or criteria not in the run (1 unknown items, 1 unknown criteria), left out of every figure: q9/c, q1/x'
        """
        if not self.count:
            return f"labels: all {self.labels} name items and criteria of the run"
        more = ", …" if self.count > len(self.first) else ""
        return (f"labels: {self.count} of {self.labels} name items or criteria not in the run "
                f"({self.unknown_items} unknown items, {self.unknown_criteria} unknown "
                f"criteria), left out of every figure: {', '.join(self.first)}{more}")


def stray_labels(labels: Iterable[Verdict], verdicts: Iterable[Verdict],
                 rubrics: Rubrics | None = None, *, shown: int = SHOWN_STRAYS) -> StrayLabels:
    """The labels on items or criteria that are not in the run: its items are those of its
    ``verdicts``; an item's criteria, those of its rubric (when ``rubrics`` know it) and those
    its verdicts name.

    >>> label = Verdict(item_id="q1", criterion_id="x", decision="MET", judge="dr")
    >>> stray_labels([label], [label.model_copy(update={"criterion_id": "c"})]).first
    ['q1/x']
    """
    criteria: dict[str, set[str]] = {}
    for v in verdicts:
        criteria.setdefault(v.item_id, set()).add(v.criterion_id)
    if rubrics is not None:
        for item_id, known in criteria.items():
            known.update(c.id for c in rubrics.criteria(item_id) or ())
    labels = list(labels)
    items = criteria_missing = 0
    first: list[str] = []
    for label in labels:
        if label.item_id not in criteria:
            items += 1
        elif label.criterion_id not in criteria[label.item_id]:
            criteria_missing += 1
        else:
            continue
        if len(first) < shown:
            first.append(f"{label.item_id}/{label.criterion_id}")
    return StrayLabels(labels=len(labels), unknown_items=items,
                       unknown_criteria=criteria_missing, first=first)
