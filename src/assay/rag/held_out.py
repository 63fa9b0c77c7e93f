"""Seed 002 Table 2 as the paper computed it: every model family trained on one fixed,
stratified training split and scored on the held-out rest, per-class F1 for each target.

The paper's protocol (§8.2): a 17.5% stratified test split, the rest for training (with its own
grid search for random forest and SVM); per-class F1 on the test split for harmfulness
(harmful / unharmful), helpfulness (helpful / unhelpful) and inappropriateness, a 3-class
target (yes / slightly / no), and an average row over the families. Unlike
:func:`assay.rag.classify.train`'s nested cross-validation, which scores the family it then
selects (an optimistic estimate of the selection), these figures come from items no model saw.

The split is drawn once per target from the seed and the labelled ids, so every family is
scored on the same test items, and the same data and seed give the same split.

Example:
    >>> import numpy as np
    >>> per_class_f1(np.array(["yes", "no", "no", "slightly"]),
    ...              np.array(["yes", "no", "yes", "no"]), ["yes", "slightly", "no"])
    [0.6666666666666666, 0.0, 0.5]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from assay.errors import InputError
from assay.rag.classify import FAMILIES, FEATURES, PAPER_GRIDS, feature_row, human_row
from assay.rag.grading import RagGrade
from assay.rag.items import RagItem

TEST_SIZE = 0.175
"""The paper's held-out share (§8.2: 17.5% balanced test set)."""

CLASSES: dict[str, list[Any]] = {
    "harmful": [True, False],
    "helpful": [True, False],
    "inappropriate": ["yes", "slightly", "no"],
}
"""Each target's classes, in Table 2's column order."""

CLASS_NAMES: dict[str, list[str]] = {
    "harmful": ["Harmful", "Unharmful"],
    "helpful": ["Helpful", "Unhelpful"],
    "inappropriate": ["Inappr. Yes", "Inappr. Slightly", "Inappr. No"],
}


def per_class_f1(y_true: np.ndarray, y_pred: np.ndarray, classes: Sequence[Any]
                 ) -> list[float | None]:
    """F1 of each class in ``classes`` (None where a class is neither present nor predicted)."""
    out: list[float | None] = []
    for c in classes:
        tp = int(((y_pred == c) & (y_true == c)).sum())
        fp = int(((y_pred == c) & (y_true != c)).sum())
        fn = int(((y_pred != c) & (y_true == c)).sum())
        out.append(None if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn))
    return out


class TargetSplit(BaseModel):
    """One target's fixed split: sizes, class counts, the held-out ids, what was skipped."""

    target: str
    classes: list[str]
    train: int
    test: int
    test_counts: dict[str, int]
    test_ids: list[str]
    skipped: int


class FamilyRow(BaseModel):
    """One model family's per-class F1 on the held-out items, by target (None: not computed)."""

    family: str
    f1: dict[str, list[float | None]]
    best_params: dict[str, dict[str, Any]] = {}


class HeldOutTable(BaseModel):
    """Table 2's shape: one row per family, then the average row; ``skipped``: the targets
    left out for too few labels, and why."""

    source: str
    seed: int
    test_size: float
    splits: list[TargetSplit]
    rows: list[FamilyRow]
    average: FamilyRow
    skipped: dict[str, str] = {}
    estimate: str = "held-out: every family scored on the same stratified test split"


def _rows(items: Sequence[RagItem], grades: Sequence[RagGrade] | None, target: str,
          source: str) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    by_id = {g.id: g for g in grades or []}
    ids, rows, labels, skipped = [], [], [], 0
    for item in items:
        label = getattr(item.labels, target)
        row = human_row(item) if source == "human" else (
            feature_row(by_id[item.id]) if item.id in by_id else None)
        if label is None or row is None:
            skipped += 1
            continue
        ids.append(item.id)
        rows.append(row)
        labels.append(str(label).lower() if target == "inappropriate" else bool(label))
    X = np.asarray(rows, float).reshape(-1, len(FEATURES))
    return ids, X, np.asarray(labels, dtype=object), skipped


def _estimator(family: str, seed: int, minority: int, grid: bool) -> Any:
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from assay.rag.classify import make_estimator

    model = make_estimator(family, seed=seed, grid=False)
    if grid and family in PAPER_GRIDS and minority >= 3:
        cv = StratifiedKFold(n_splits=min(3, minority), shuffle=True, random_state=seed)
        return GridSearchCV(model, PAPER_GRIDS[family], scoring="f1_macro", cv=cv, n_jobs=1)
    return model


def held_out_table(items: Sequence[RagItem], grades: Sequence[RagGrade] | None = None, *,
                   source: str = "judge", families: Sequence[str] = FAMILIES, seed: int = 0,
                   test_size: float = TEST_SIZE, targets: Sequence[str] = tuple(CLASSES),
                   grid: bool = True) -> HeldOutTable:
    """Table 2 for ``targets`` on one fixed stratified split per target; random forest and SVM
    are grid-searched on the training split when ``grid``.

    Every target is checked before any model is trained: one with too few labels for a
    stratified split is left out (named in ``skipped`` with its label counts) and the others
    are computed; :class:`InputError` only when no target can be split."""
    prepared, skipped = [], {}
    for target in targets:
        split = _split(items, grades, target, source, seed, test_size)
        if isinstance(split, str):
            skipped[target] = split
        else:
            prepared.append(split)
    if not prepared:
        raise InputError("; ".join(f"{t}: {why}" for t, why in skipped.items()))
    splits: list[TargetSplit] = []
    scores: dict[str, dict[str, list[float | None]]] = {f: {} for f in families}
    params: dict[str, dict[str, dict[str, Any]]] = {f: {} for f in families}
    for target, ids, X, y, train, test, skipped_items in prepared:
        classes = [c for c in CLASSES[target] if (y == c).any()]
        splits.append(TargetSplit(
            target=target, classes=CLASS_NAMES[target], train=len(train), test=len(test),
            test_counts={str(c): int((y[test] == c).sum()) for c in CLASSES[target]},
            test_ids=sorted(ids[i] for i in test), skipped=skipped_items))
        y_train = y[train].astype(str)
        minority = min(int((y_train == str(c)).sum()) for c in classes)
        for family in families:
            model = _estimator(family, _seed(seed, family, target), minority, grid)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X[train], y_train)
            if hasattr(model, "best_params_"):
                params[family][target] = dict(model.best_params_)
            predicted = model.predict(X[test])
            scores[family][target] = per_class_f1(y[test].astype(str), predicted,
                                                  [str(c) for c in CLASSES[target]])
    rows = [FamilyRow(family=f, f1=scores[f], best_params=params[f]) for f in families]
    average = FamilyRow(family="average", f1={
        s.target: [_mean([r.f1[s.target][k] for r in rows]) for k in range(len(s.classes))]
        for s in splits})
    return HeldOutTable(source=source, seed=seed, test_size=test_size, splits=splits, rows=rows,
                        average=average, skipped=skipped)


def _split(items: Sequence[RagItem], grades: Sequence[RagGrade] | None, target: str,
           source: str, seed: int, test_size: float) -> tuple | str:
    """``(target, ids, X, y, train, test, items skipped)`` of one target's fixed split, or why
    it cannot be split (too few labelled items per class)."""
    from sklearn.model_selection import train_test_split

    ids, X, y, skipped = _rows(items, grades, target, source)
    counts = {str(c): int((y == c).sum()) for c in CLASSES[target] if (y == c).any()}
    if len(counts) < 2 or min(counts.values()) < 2:
        return (f"a stratified split needs 2+ labelled items of 2+ classes; have "
                f"{counts or 'none'} ({skipped} items without a label or features)")
    try:
        train, test = train_test_split(np.arange(len(y)), test_size=test_size,
                                       stratify=y.astype(str),
                                       random_state=_seed(seed, "held-out", target))
    except ValueError as exc:
        return f"{exc} (labels: {counts})"
    return target, ids, X, y, train, test, skipped


def _seed(master: int, *parts: str) -> int:
    from assay.grading.seeding import derive_seed

    return derive_seed(master, "rag-held-out", *parts) % 2**32


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None
