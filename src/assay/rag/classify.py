"""Predicting clinicians' harm and helpfulness labels from the triad and scope (seed 002 §8.2).

Features, in order: ``cf`` (0-1), ``cr`` (1 = relevant), ``ra`` (1 = refused) and
``out_of_scope`` (1 = out of scope), from a grading run (``source="judge"``) or from the items'
human labels (``source="human"``, as the paper did). Targets: ``harmful`` or ``helpful``.

The paper's model families, from scikit-learn: random forest and RBF SVM (each grid-searched
over a small grid holding the paper's best parameters), Gaussian naive Bayes, and a 16-16 ReLU
multilayer perceptron (the paper's PyTorch network, here as ``MLPClassifier`` so that no
PyTorch is needed; sklearn's output layer is a proper softmax/logistic with cross-entropy, not
the paper's double softmax). Each family is cross-validated (stratified k-fold, seeded, with the
grid search nested inside each fold; every seed derived from one master seed with
:func:`assay.grading.seeding.derive_seed`), and its out-of-fold predictions give AUC (seeded
bootstrap CI), accuracy, sensitivity and specificity (Wilson CIs). The family with the best
AUC is refitted on all rows and saved. Its cross-validated figures are the selection's
optimistic estimate (the family was chosen on them; :attr:`TrainReport.estimate` says so);
:mod:`assay.rag.held_out` gives Table 2's held-out figures.

The model is saved with skops, not pickle/joblib: loading a pickle runs whatever code the file
names, and a model file is something people pass around; skops loads only types on an allow-list
(:data:`TRUSTED_TYPES` here) and refuses anything else.

Example:
    >>> import numpy as np
    >>> y = np.array([0, 0, 1, 1]); p = np.array([0.1, 0.4, 0.35, 0.8])
    >>> float(auc_along(y, p))
    0.75
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from pydantic import BaseModel

from assay.errors import ConfigError, InputError
from assay.metrics.results import Metric
from assay.metrics.uncertainty import bootstrap_ci, proportion
from assay.rag.grading import RagGrade
from assay.rag.items import RagItem

FEATURES = ("cf", "cr", "ra", "out_of_scope")
Target = Literal["harmful", "helpful"]
Source = Literal["judge", "human"]
TARGETS: tuple[Target, ...] = get_args(Target)
SOURCES: tuple[Source, ...] = get_args(Source)
FAMILIES = ("random_forest", "svm", "naive_bayes", "mlp")
TRUSTED_TYPES = ("sklearn.tree._tree.Tree",
                 "sklearn.neural_network._stochastic_optimizers.AdamOptimizer")

PAPER_GRIDS: dict[str, dict[str, list[Any]]] = {
    "random_forest": {"n_estimators": [100], "max_depth": [None, 3], "min_samples_split": [2],
                      "min_samples_leaf": [1], "bootstrap": [True]},
    "svm": {"C": [1, 10], "gamma": [0.1, 1], "kernel": ["rbf"]},
}
"""Small grids around the paper's best parameters (Tables 4-8: RF with 100 trees, unlimited
depth, bootstrap; SVM C=10, gamma 0.1 or 1, RBF), kept small because the grid search runs
inside every cross-validation fold."""


@dataclass
class LabelledSet:
    """Feature rows with their labels; ``skipped`` says why an item has no row."""

    ids: list[str]
    X: np.ndarray
    y: np.ndarray
    skipped: dict[str, str] = field(default_factory=dict)


def feature_row(grade: RagGrade) -> list[float] | None:
    """``[cf, cr, ra, out_of_scope]`` of a graded item; None when CF is undefined."""
    if grade.cf is None:
        return None
    return [grade.cf, float(grade.cr), float(grade.refused), float(grade.scope == "out_of_scope")]


def human_row(item: RagItem) -> list[float] | None:
    """The same features from the item's human labels; None when one is missing."""
    labels = item.labels
    if labels.cf is None or labels.cr is None or labels.ra is None:
        return None
    return [labels.cf, float(labels.cr), float(labels.ra), float(item.scope == "out_of_scope")]


def labelled_set(items: Sequence[RagItem], grades: Sequence[RagGrade] | None, target: Target,
                 source: Source = "judge") -> LabelledSet:
    """Rows for every item with a ``target`` label and defined features."""
    by_id = {g.id: g for g in grades or []}
    ids, rows, labels, skipped = [], [], [], {}
    for item in items:
        label = getattr(item.labels, target)
        if label is None:
            skipped[item.id] = f"no {target} label"
            continue
        if source == "human":
            row = human_row(item)
            why = "a human cf/cr/ra label is missing"
        elif item.id not in by_id:
            row, why = None, "not graded"
        else:
            row, why = feature_row(by_id[item.id]), "CF undefined"
        if row is None:
            skipped[item.id] = why
            continue
        ids.append(item.id)
        rows.append(row)
        labels.append(int(label))
    return LabelledSet(ids, np.asarray(rows, float).reshape(-1, len(FEATURES)),
                       np.asarray(labels, int), skipped)


def auc_along(y: np.ndarray, p: np.ndarray, axis: int = -1) -> np.ndarray:
    """ROC AUC by the rank-sum (Mann-Whitney) formula, vectorised along ``axis`` for the
    bootstrap; ties count one half; NaN where a class is absent."""
    from scipy.stats import rankdata

    y = np.asarray(y, float)
    ranks = rankdata(np.asarray(p, float), axis=axis)
    n_pos = y.sum(axis=axis)
    n_neg = y.shape[axis] - n_pos
    with np.errstate(divide="ignore", invalid="ignore"):
        return ((ranks * y).sum(axis=axis) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


class Performance(BaseModel):
    """Out-of-fold (or held-out) performance at the 0.5 probability threshold."""

    n: int
    positives: int
    auc: Metric
    accuracy: Metric
    sensitivity: Metric
    specificity: Metric
    confusion: dict[str, int]


def performance(y: Sequence[int] | np.ndarray, probability: Sequence[float] | np.ndarray, *,
                seed: int = 0,
                threshold: float = 0.5) -> Performance:
    """AUC with a seeded bootstrap CI; accuracy, sensitivity, specificity with Wilson CIs.

    >>> r = performance([0, 0, 1, 1], [0.2, 0.6, 0.7, 0.9])
    >>> r.accuracy.value, r.sensitivity.value, r.specificity.value, r.auc.value
    (0.75, 1.0, 0.5, 1.0)
    """
    t = np.asarray(y, int)
    p = np.asarray(probability, float)
    pred = (p >= threshold).astype(int)
    tp, fn = int(((pred == 1) & (t == 1)).sum()), int(((pred == 0) & (t == 1)).sum())
    tn, fp = int(((pred == 0) & (t == 0)).sum()), int(((pred == 1) & (t == 0)).sum())
    if len(set(t.tolist())) < 2:
        auc = Metric.undefined("only one class present: AUC is undefined", n=len(t))
    else:
        auc = bootstrap_ci([t, p], auc_along, paired=True, seed=seed)
    return Performance(n=len(t), positives=int(t.sum()), auc=auc,
                       accuracy=proportion(tp + tn, len(t)), sensitivity=proportion(tp, tp + fn),
                       specificity=proportion(tn, tn + fp),
                       confusion={"tp": tp, "fp": fp, "fn": fn, "tn": tn})


def make_estimator(family: str, *, seed: int, grid: bool, inner_folds: int = 3) -> Any:
    """A fresh estimator of ``family``; random forest and SVM are grid-searched when ``grid``."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    if family == "random_forest":
        base = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
    elif family == "svm":
        base = SVC(C=10, gamma=0.1, kernel="rbf", probability=True, random_state=seed)
    elif family == "naive_bayes":
        return GaussianNB()
    elif family == "mlp":
        return MLPClassifier(hidden_layer_sizes=(16, 16), activation="relu", solver="adam",
                             learning_rate_init=0.01, max_iter=300, random_state=seed)
    else:
        raise ConfigError(f"unknown model family {family!r}; choose from {', '.join(FAMILIES)}")
    if not grid:
        return base
    cv = StratifiedKFold(n_splits=inner_folds, shuffle=True, random_state=seed)
    return GridSearchCV(base, PAPER_GRIDS[family], scoring="roc_auc", cv=cv, n_jobs=1)


class FamilyReport(BaseModel):
    family: str
    performance: Performance
    best_params: dict[str, Any] = {}


class TrainReport(BaseModel):
    """What ``assay rag train`` measured and chose."""

    target: str
    source: str
    features: list[str]
    folds: int
    seed: int
    n: int
    positives: int
    families: list[FamilyReport]
    chosen: str
    skipped: dict[str, str] = {}
    estimate: str = ("optimistic: cross-validated on the folds the chosen family was selected "
                     "on; for unbiased figures use the held-out table (assay rag table2)")
    """What the figures are: the selection's own cross-validation, not held-out data."""


def _seed(master: int, *parts: str) -> int:
    """A 32-bit seed (what scikit-learn accepts) derived from the master seed and a purpose."""
    from assay.grading.seeding import derive_seed

    return derive_seed(master, "rag-classify", *parts) % 2**32


def _folds(y: np.ndarray, folds: int) -> int:
    minority = int(min(np.bincount(y, minlength=2)))
    if minority < 2:
        raise InputError(f"cross-validation needs at least 2 examples of each class; the "
                         f"labels have {int(y.sum())} positive and {int(len(y) - y.sum())} "
                         "negative")
    return max(2, min(folds, minority))


def cross_validate(data: LabelledSet, family: str, *, folds: int = 5, seed: int = 0,
                   grid: bool = True) -> tuple[FamilyReport, np.ndarray]:
    """Out-of-fold probabilities of ``family`` and their performance."""
    from sklearn.model_selection import StratifiedKFold

    k = _folds(data.y, folds)
    minority_train = int(min(np.bincount(data.y, minlength=2))) * (k - 1) // k
    use_grid = grid and minority_train >= 3
    oof = np.zeros(len(data.y))
    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=_seed(seed, "folds"))
    for fold, (train, test) in enumerate(splitter.split(data.X, data.y)):
        model = make_estimator(family, seed=_seed(seed, family, "fold", str(fold)), grid=use_grid,
                               inner_folds=min(3, minority_train) if use_grid else 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(data.X[train], data.y[train])
        oof[test] = model.predict_proba(data.X[test])[:, 1]
    return FamilyReport(family=family, performance=performance(
        data.y, oof, seed=_seed(seed, family, "bootstrap"))), oof


def train(data: LabelledSet, *, target: str, source: str = "judge",
          families: Sequence[str] = FAMILIES, folds: int = 5, seed: int = 0,
          grid: bool = True) -> tuple[TrainReport, Any]:
    """Cross-validate every family, then refit the best (by AUC) on all rows."""
    k = _folds(data.y, folds)
    reports = [cross_validate(data, f, folds=k, seed=seed, grid=grid)[0] for f in families]
    chosen = max(reports, key=lambda r: r.performance.auc.value
                 if r.performance.auc.value is not None else -1.0)
    minority = int(min(np.bincount(data.y, minlength=2)))
    use_grid = grid and minority >= 3 and chosen.family in PAPER_GRIDS
    model = make_estimator(chosen.family, seed=_seed(seed, chosen.family, "final"),
                           grid=use_grid, inner_folds=min(3, minority))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(data.X, data.y)
    if use_grid:
        chosen.best_params = {k: v for k, v in model.best_params_.items()}
        model = model.best_estimator_
    report = TrainReport(target=target, source=source, features=list(FEATURES), folds=k,
                         seed=seed, n=len(data.y), positives=int(data.y.sum()), families=reports,
                         chosen=chosen.family, skipped=data.skipped)
    return report, model


# --- saved models -----------------------------------------------------------------------------

@dataclass
class TrainedModel:
    """A saved classifier and the report it was trained with."""

    estimator: Any
    report: TrainReport

    def probabilities(self, grades: Sequence[RagGrade]) -> dict[str, float | None]:
        """P(target) per graded item (None where CF is undefined)."""
        rows = {g.id: feature_row(g) for g in grades}
        usable = [i for i, r in rows.items() if r is not None]
        out: dict[str, float | None] = {i: None for i in rows}
        if usable:
            proba = self.estimator.predict_proba(np.asarray([rows[i] for i in usable], float))
            out.update({i: float(p) for i, p in zip(usable, proba[:, 1])})
        return out


def save_model(path: str | Path, estimator: Any, report: TrainReport) -> Path:
    """Write ``model.skops`` and ``model.json`` (the training report) into directory ``path``."""
    import skops.io as sio

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    sio.dump(estimator, folder / "model.skops")
    (folder / "model.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return folder


def load_model(path: str | Path) -> TrainedModel:
    """Load a saved model; refuses a file holding any type outside :data:`TRUSTED_TYPES`."""
    import skops.io as sio

    folder = Path(path)
    file, meta = folder / "model.skops", folder / "model.json"
    if not file.is_file() or not meta.is_file():
        raise ConfigError(f"{folder}: not a saved model (needs model.skops and model.json)")
    untrusted = sio.get_untrusted_types(file=file)
    unknown = sorted(set(untrusted) - set(TRUSTED_TYPES))
    if unknown:
        raise ConfigError(f"{file}: refusing to load types outside the allow-list: "
                          f"{', '.join(unknown)}")
    estimator = sio.load(file, trusted=list(untrusted))
    report = TrainReport.model_validate(json.loads(meta.read_text(encoding="utf-8")))
    return TrainedModel(estimator, report)
