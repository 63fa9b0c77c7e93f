"""Agreement of ordinal verdicts with ground truth.

Options are compared by their *step* (position among the criterion's scored options, in the
criterion's own order) and by their *value* (the option's score in [0, 1]):

- exact and adjacent accuracy (|step_pred − step_true| ≤ 1), on steps;
- linear and quadratic weighted Cohen's κ (scikit-learn), on steps over all K levels;
- Spearman ρ and Kendall τ-b (SciPy), on steps;
- RMSE and MAE, on option values;
- earth mover's distance (SciPy's Wasserstein-1) between the true and predicted label
  distributions, in ordinal steps (lower is better).

Example:
    >>> r = ordinal_agreement([0, 1, 2, 2], [0, 2, 2, 1], n_levels=3,
    ...                       true_values=[0, .5, 1, 1], pred_values=[0, 1, 1, .5])
    >>> r.exact_accuracy.value, r.adjacent_accuracy.value, r.mae.value
    (0.5, 1.0, 0.25)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.metrics.results import Metric


class OrdinalAgreement(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    exact_accuracy: Metric
    adjacent_accuracy: Metric
    kappa_linear: Metric
    kappa_quadratic: Metric
    spearman: Metric
    kendall: Metric
    rmse: Metric
    mae: Metric
    emd: Metric


def rank_correlation(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, method: str) -> Metric:
    """Spearman ρ or Kendall τ-b (``method`` = "spearman" | "kendall"), None when undefined.

    >>> rank_correlation([1, 2, 3], [1, 3, 2], "spearman").value
    0.5
    >>> rank_correlation([1, 1, 1], [1, 2, 3], "kendall").reason
    'one side is constant'
    """
    from scipy import stats

    n = len(x)
    if n < 2:
        return Metric.undefined("fewer than two pairs", n=n)
    if np.ptp(np.asarray(x, float)) == 0 or np.ptp(np.asarray(y, float)) == 0:
        return Metric.undefined("one side is constant", n=n)
    tests: dict[str, Callable[..., Any]] = {"spearman": stats.spearmanr,
                                             "kendall": stats.kendalltau}
    func = tests[method]
    return Metric.of(func(x, y).statistic, n=n)


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Metric:
    """Pearson's r (SciPy), None when a side is constant or there are fewer than two pairs."""
    from scipy import stats

    n = len(x)
    if n < 2:
        return Metric.undefined("fewer than two pairs", n=n)
    if np.ptp(np.asarray(x, float)) == 0 or np.ptp(np.asarray(y, float)) == 0:
        return Metric.undefined("one side is constant", n=n)
    return Metric.of(stats.pearsonr(x, y).statistic, n=n)


def weighted_kappa(
    true_steps: Sequence[int] | np.ndarray, pred_steps: Sequence[int] | np.ndarray, n_levels: int, weights: str | None
) -> Metric:
    """Cohen's κ over labels 0..n_levels−1 with ``weights`` None, "linear" or "quadratic"."""
    from sklearn.metrics import cohen_kappa_score

    n = len(true_steps)
    if n == 0:
        return Metric.undefined("no pairs to compare")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(
            true_steps, pred_steps, labels=list(range(n_levels)), weights=weights
        )
    return Metric.of(value, n=n, reason="chance disagreement is 0: both raters are constant")


def ordinal_agreement(
    true_steps: Sequence[int] | np.ndarray,
    pred_steps: Sequence[int] | np.ndarray,
    *,
    n_levels: int,
    true_values: Sequence[float] | np.ndarray,
    pred_values: Sequence[float] | np.ndarray,
) -> OrdinalAgreement:
    """Compare ordinal labels given as steps (0..n_levels−1) and as option values."""
    from scipy import stats

    n = len(true_steps)
    if not (len(pred_steps) == len(true_values) == len(pred_values) == n):
        raise ValueError("true/pred steps and values must have the same length")
    if n == 0:
        none = Metric.undefined("no pairs to compare")
        return OrdinalAgreement(
            n=0, exact_accuracy=none, adjacent_accuracy=none, kappa_linear=none,
            kappa_quadratic=none, spearman=none, kendall=none, rmse=none, mae=none, emd=none,
        )
    t, p = np.asarray(true_steps, int), np.asarray(pred_steps, int)
    error = np.asarray(pred_values, float) - np.asarray(true_values, float)
    return OrdinalAgreement(
        n=n,
        exact_accuracy=Metric.of(float(np.mean(t == p)), n=n),
        adjacent_accuracy=Metric.of(float(np.mean(np.abs(t - p) <= 1)), n=n),
        kappa_linear=weighted_kappa(t, p, n_levels, "linear"),
        kappa_quadratic=weighted_kappa(t, p, n_levels, "quadratic"),
        spearman=rank_correlation(t, p, "spearman"),
        kendall=rank_correlation(t, p, "kendall"),
        rmse=Metric.of(float(np.sqrt(np.mean(error**2))), n=n),
        mae=Metric.of(float(np.mean(np.abs(error))), n=n),
        emd=Metric.of(float(stats.wasserstein_distance(t, p)), n=n),
    )
