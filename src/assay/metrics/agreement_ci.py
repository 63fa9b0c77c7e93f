"""Seeded bootstrap CIs for agreement with human labels: κ, F1, accuracy, score correlations.

Verdicts on the criteria of one item are not independent, so the unit resampled is the *item*:
each of ``n_resamples`` resamples draws the labelled items with replacement (one generator
seeded with ``seed``), every pair of a drawn item comes along, and each figure is recomputed
from the resample's weighted confusion matrices. The interval is the percentile interval of
the resampled figures, at 95%.

A figure with no value has no CI. Where a figure is undefined on some resamples (κ when a
resample holds one class only, F1 with no MET), those resamples are left out and the interval
says how many (``Interval.method``), provided at least 95% of them are defined; otherwise, and
with fewer than two items, the CI is None and ``Metric.reason`` says why.

Example:
    >>> import numpy as np
    >>> confusions = np.array([[[3, 1], [0, 4]], [[4, 0], [0, 4]]])  # [true, pred], 2 resamples
    >>> kappa_of(1 - np.eye(2))(confusions).round(3), f1_of(confusions).round(3)
    (array([0.75, 1.  ]), array([0.889, 1.   ]))
    >>> item_resamples(3, n_resamples=2, seed=0).sum(axis=1)  # each resample draws 3 items
    array([3, 3])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from assay.metrics.agreement_binary import BinaryAgreement
from assay.metrics.agreement_report import AgreementReport, CriterionAgreement, PooledAgreement
from assay.metrics.labels import LabelPair
from assay.metrics.results import Interval, Metric
from assay.metrics.scores import ScoreAgreement, paired_scores
from assay.rubric.criterion import CriterionKind

LEVEL = 0.95
MIN_DEFINED = 0.95  # share of resamples on which a figure must be defined to give a CI

Statistic = Callable[[np.ndarray], np.ndarray]  # (B, K, K) confusions -> (B,) values, NaN = undefined


def item_resamples(n_items: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n_items)`` counts: how often each item is drawn in each resample."""
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, n_items, size=(n_resamples, n_items))
    drawn += np.arange(n_resamples)[:, None] * n_items  # in place: one array of draws, not two
    return np.bincount(drawn.ravel(), minlength=n_resamples * n_items).reshape(n_resamples, n_items)


def kappa_of(disagreement: np.ndarray) -> Statistic:
    """Cohen's κ with the given disagreement weights (1 − I: unweighted; (i − j)²: quadratic)."""
    def kappa(confusion: np.ndarray) -> np.ndarray:
        n = confusion.sum(axis=(1, 2))
        expected = confusion.sum(axis=2)[:, :, None] * confusion.sum(axis=1)[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = expected / n[:, None, None]
            observed_w = (confusion * disagreement).sum(axis=(1, 2))
            expected_w = (expected * disagreement).sum(axis=(1, 2))
            return np.where(expected_w > 0, 1 - observed_w / expected_w, np.nan)
    return kappa


def accuracy_of(confusion: np.ndarray) -> np.ndarray:
    n = confusion.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, np.trace(confusion, axis1=1, axis2=2) / n, np.nan)


def f1_of(confusion: np.ndarray) -> np.ndarray:
    """F1 of the MET class (index 1) from ``confusion[true, pred]``."""
    tp, fp, fn = confusion[:, 1, 1], confusion[:, 0, 1], confusion[:, 1, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)


def resampled_confusions(resamples: np.ndarray, item_of_pair: np.ndarray,
                         codes: Sequence[tuple[int, int]], n_levels: int) -> np.ndarray:
    """``(B, K, K)``: each resample's confusion matrix ``[true, pred]`` of the given pairs.

    Pairs are first counted per item, so the cost grows with the items the pairs touch, not
    with the number of pairs.
    """
    cells = np.array([t * n_levels + p for t, p in codes], int)
    touched, local = np.unique(item_of_pair, return_inverse=True)
    per_item = np.zeros((len(touched), n_levels * n_levels))
    np.add.at(per_item, (local, cells), 1)
    return (resamples[:, touched] @ per_item).reshape(-1, n_levels, n_levels)


def interval_metric(metric: Metric, resampled: np.ndarray) -> Metric:
    """``metric`` with the percentile CI of its ``resampled`` values (NaN = undefined)."""
    if metric.value is None:
        return metric
    defined = resampled[np.isfinite(resampled)]
    total = len(resampled)
    if total == 0:
        return metric.model_copy(update={"reason": "CI undefined: fewer than two items"})
    if len(defined) < MIN_DEFINED * total:
        return metric.model_copy(update={"reason": (
            f"CI undefined: the figure is undefined on {total - len(defined)} of {total} "
            "bootstrap resamples (too few items or one class only)")})
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    method = "percentile" if len(defined) == total else (
        f"percentile ({total - len(defined)} of {total} resamples undefined, left out)")
    return metric.model_copy(update={"ci": Interval(low=float(low), high=float(high),
                                                    level=LEVEL, method=method)})


# -- the reports --------------------------------------------------------------------------------


class _Group:
    """The scored pairs of one criterion (or a pooled set), coded for confusion matrices."""

    def __init__(self, pairs: Sequence[LabelPair], item_index: Mapping[str, int]) -> None:
        info = pairs[0].criterion
        self.kind = info.kind
        if info.kind is CriterionKind.BINARY:
            labels: list = [False, True]
        elif info.kind is CriterionKind.ORDINAL:
            labels = list(info.options)
        else:
            labels = list(info.options) + sorted(
                {str(x) for p in pairs for x in (p.true, p.pred)} - set(info.options))
        code = {label: i for i, label in enumerate(labels)}
        self.n_levels = len(labels)
        self.items = np.array([item_index[p.item_id] for p in pairs], int)
        if info.kind is CriterionKind.NOMINAL:
            self.codes = [(code[str(p.true)], code[str(p.pred)]) for p in pairs]
        else:
            self.codes = [(code[p.true], code[p.pred]) for p in pairs]
        steps = np.arange(self.n_levels)
        self.disagreement = ((steps[:, None] - steps[None, :]) ** 2 if info.kind is
                             CriterionKind.ORDINAL else 1 - np.eye(self.n_levels))

    def confusions(self, resamples: np.ndarray) -> np.ndarray:
        return resampled_confusions(resamples, self.items, self.codes, self.n_levels)


class _MeanKappa:
    """The running macro mean of κ over criteria, per resample (criteria undefined there skipped)."""

    def __init__(self, n_resamples: int) -> None:
        self.total = np.zeros(n_resamples)
        self.count = np.zeros(n_resamples)

    def add(self, kappa: np.ndarray) -> None:
        defined = np.isfinite(kappa)
        self.total[defined] += kappa[defined]
        self.count[defined] += 1

    def values(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.count > 0, self.total / self.count, np.nan)


def report_with_cis(report: AgreementReport, pairs: Sequence[LabelPair], *, seed: int = 0,
                    n_resamples: int = 1000) -> AgreementReport:
    """``report`` with bootstrap CIs on κ, F1 and accuracy per criterion, per axis and pooled,
    and on the score-level figures (see the module docstring)."""
    scored = [p for p in pairs if p.true is not None and p.pred is not None]
    item_ids = sorted({p.item_id for p in scored})
    if len(item_ids) < 2 or n_resamples <= 0:
        why = ("CI undefined: fewer than two items" if n_resamples > 0
               else "CI not computed (no bootstrap resamples asked for)")
        return _without_cis(report, why)
    index = {item: i for i, item in enumerate(item_ids)}
    resamples = item_resamples(len(item_ids), n_resamples=n_resamples, seed=seed)
    by_criterion: dict[str, list[LabelPair]] = defaultdict(list)
    for p in scored:
        by_criterion[p.criterion.id].append(p)
    mean_kappa = _MeanKappa(n_resamples)
    axis_kappa = {axis: _MeanKappa(n_resamples) for axis in report.per_axis}
    per_criterion = []
    for c in report.per_criterion:  # one criterion at a time: memory stays O(resamples)
        if c.criterion_id not in by_criterion:
            per_criterion.append(c)
            continue
        group = _Group(by_criterion[c.criterion_id], index)
        confusion = group.confusions(resamples)
        kappa = kappa_of(group.disagreement)(confusion)
        mean_kappa.add(kappa)
        if c.axis in axis_kappa:
            axis_kappa[c.axis].add(kappa)
        per_criterion.append(_criterion_cis(c, confusion, kappa))
    pooled = _pooled_cis(report.pooled, scored, mean_kappa.values(), resamples, index)
    per_axis = {axis: _pooled_cis(stats, [p for p in scored if p.criterion.axis == axis],
                                  axis_kappa[axis].values(), resamples, index)
                for axis, stats in report.per_axis.items()}
    return report.model_copy(update={"per_criterion": per_criterion, "pooled": pooled,
                                     "per_axis": per_axis})


def _criterion_cis(c: CriterionAgreement, confusion: np.ndarray,
                   kappa: np.ndarray) -> CriterionAgreement:
    accuracy = accuracy_of(confusion)
    if c.binary is not None:
        binary = c.binary.model_copy(update={
            "kappa": interval_metric(c.binary.kappa, kappa),
            "accuracy": interval_metric(c.binary.accuracy, accuracy),
            "f1": interval_metric(c.binary.f1, f1_of(confusion))})
        return c.model_copy(update={"binary": binary})
    if c.ordinal is not None:
        ordinal = c.ordinal.model_copy(update={
            "kappa_quadratic": interval_metric(c.ordinal.kappa_quadratic, kappa),
            "exact_accuracy": interval_metric(c.ordinal.exact_accuracy, accuracy)})
        return c.model_copy(update={"ordinal": ordinal})
    assert c.nominal is not None
    nominal = c.nominal.model_copy(update={"kappa": interval_metric(c.nominal.kappa, kappa),
                                           "accuracy": interval_metric(c.nominal.accuracy, accuracy)})
    return c.model_copy(update={"nominal": nominal})


def _pooled_cis(pooled: PooledAgreement, scored: Sequence[LabelPair], mean_kappa: np.ndarray,
                resamples: np.ndarray, index: Mapping[str, int]) -> PooledAgreement:
    if not scored:
        return pooled
    items = np.array([index[p.item_id] for p in scored], int)
    agree = np.bincount(items, weights=[float(p.true == p.pred) for p in scored],
                        minlength=resamples.shape[1])
    count = np.bincount(items, minlength=resamples.shape[1]).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = (resamples @ agree) / (resamples @ count)
    update: dict[str, Metric | BinaryAgreement] = {
        "accuracy": interval_metric(pooled.accuracy, accuracy),
        "mean_kappa": interval_metric(pooled.mean_kappa, mean_kappa)}
    binary_pairs = [p for p in scored if p.criterion.kind is CriterionKind.BINARY]
    if binary_pairs:
        binary = _Group(binary_pairs, index).confusions(resamples)
        update["binary"] = pooled.binary.model_copy(update={
            "kappa": interval_metric(pooled.binary.kappa, kappa_of(1 - np.eye(2))(binary)),
            "f1": interval_metric(pooled.binary.f1, f1_of(binary)),
            "accuracy": interval_metric(pooled.binary.accuracy, accuracy_of(binary))})
    return pooled.model_copy(update=update)


def _without_cis(report: AgreementReport, why: str) -> AgreementReport:
    def tag(metric: Metric) -> Metric:
        return metric if metric.value is None else metric.model_copy(update={"reason": why})

    def pooled(p: PooledAgreement) -> PooledAgreement:
        binary = p.binary.model_copy(update={k: tag(getattr(p.binary, k))
                                             for k in ("kappa", "f1", "accuracy")})
        return p.model_copy(update={"accuracy": tag(p.accuracy), "mean_kappa": tag(p.mean_kappa),
                                    "binary": binary})

    per_criterion = []
    for c in report.per_criterion:
        if c.binary is not None:
            c = c.model_copy(update={"binary": c.binary.model_copy(update={
                k: tag(getattr(c.binary, k)) for k in ("kappa", "f1", "accuracy")})})
        elif c.ordinal is not None:
            c = c.model_copy(update={"ordinal": c.ordinal.model_copy(update={
                k: tag(getattr(c.ordinal, k)) for k in ("kappa_quadratic", "exact_accuracy")})})
        elif c.nominal is not None:
            c = c.model_copy(update={"nominal": c.nominal.model_copy(update={
                k: tag(getattr(c.nominal, k)) for k in ("kappa", "accuracy")})})
        per_criterion.append(c)
    return report.model_copy(update={
        "pooled": pooled(report.pooled), "per_criterion": per_criterion,
        "per_axis": {a: pooled(p) for a, p in report.per_axis.items()}})


def scores_with_cis(scores: ScoreAgreement, predicted: Mapping[str, float | None],
                    true: Mapping[str, float | None], *, seed: int = 0,
                    n_resamples: int = 1000) -> ScoreAgreement:
    """Score-level agreement with bootstrap CIs (items resampled) on Pearson r, Spearman ρ,
    Kendall τ-b, RMSE, MAE and the bias."""
    from scipy import stats

    _, p, t = paired_scores(predicted, true)
    names = ("pearson", "spearman", "kendall", "rmse", "mae", "bias")
    if len(p) < 2 or n_resamples <= 0:
        why = ("CI undefined: fewer than two items scored on both sides" if n_resamples > 0
               else "CI not computed (no bootstrap resamples asked for)")
        return scores.model_copy(update={
            k: getattr(scores, k) if getattr(scores, k).value is None
            else getattr(scores, k).model_copy(update={"reason": why}) for k in names})
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(p), size=(n_resamples, len(p)))
    ps, ts = p[drawn], t[drawn]
    d = ps - ts
    resampled = {"rmse": np.sqrt(np.mean(d**2, axis=1)), "mae": np.mean(np.abs(d), axis=1),
                 "bias": np.mean(d, axis=1), "pearson": _rowwise_pearson(ps, ts),
                 "spearman": _rowwise_pearson(stats.rankdata(ps, axis=1),
                                              stats.rankdata(ts, axis=1)),
                 "kendall": np.array([_kendall(a, b) for a, b in zip(ps, ts, strict=True)])}
    return scores.model_copy(update={k: interval_metric(getattr(scores, k), resampled[k])
                                     for k in names})


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc, yc = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (xc * yc).sum(axis=1) / np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
    return np.where(np.isfinite(r), r, np.nan)


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    from scipy import stats

    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.kendalltau(x, y).statistic)
