"""Labels a run's item file brings with it go into the run's label store.

A run graded from a labelled file (an Autorubric dataset's ``ground_truth``) puts those labels
into ``RUN/labels.sqlite``, the store ``assay review`` writes reviewers' labels to, so
``assay agreement RUN`` and ``assay report RUN`` find them with nothing else given.

Example:
    >>> import tempfile
    >>> from assay.review.labels import RunLabels
    >>> from assay.verdict import Verdict
    >>> run = tempfile.mkdtemp()
    >>> label = Verdict(item_id="q1", criterion_id="c", decision="MET", judge="ground_truth")
    >>> store_labels(run, [label]), store_labels(run, [label])  # once only
    (1, 0)
    >>> with RunLabels.open(run) as labels:
    ...     [(v.judge, v.decision.value) for v in labels.verdicts()]
    [('ground_truth', 'MET')]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.verdict import Verdict


def store_labels(run_dir: str | Path, labels: Sequence[Verdict]) -> int:
    """Put ``labels`` into the run's label store, skipping any (item, criterion, rater) it
    already holds (a resumed run, or a reviewer's later correction); returns how many it added."""
    if not labels:
        return 0
    from assay.review.labels import RunLabels

    added = 0
    with RunLabels.open(run_dir) as store:
        have = {(label.item_id, label.criterion_id, label.rater) for label in store.labels()}
        for v in labels:
            if (v.item_id, v.criterion_id, v.judge) in have:
                continue
            store.put(v.item_id, v.criterion_id, v.judge, option=v.option, note=v.explanation,
                      verdict=None if v.decision is None else v.decision.value)
            added += 1
    return added
