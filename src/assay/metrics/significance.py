"""Paired and two-sample tests, and effect size.

- :func:`mcnemar_exact`: McNemar's exact test on paired binary outcomes (statsmodels; the
  exact form is the two-sided binomial test on the discordant pairs);
- :func:`wilcoxon_signed_rank`: Wilcoxon signed-rank test on paired scores (SciPy);
- :func:`paired_permutation`: two-sided paired (sign-flip) permutation test of the mean
  difference (SciPy's ``permutation_test``; exact when 2^n ≤ ``n_resamples``), seeded;
- :func:`cohens_d`: paired d_z = mean(diff) / SD(diff), or independent d with pooled SD;
- :func:`two_proportion_ztest`: two-sided pooled two-proportion z-test (statsmodels).

Undefined tests (no discordant pairs, all differences zero) return ``StatTest`` with
``p_value`` None and a reason.

Example:
    >>> t = mcnemar_exact([True] * 10 + [False] * 3, [False] * 9 + [True] * 4)
    >>> t.details["b"], t.details["c"], round(t.p_value, 4)
    (9, 3, 0.146)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from assay.metrics.results import Metric, StatTest
from assay.metrics.uncertainty import resample_batch


def _paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    return np.asarray(a, float), np.asarray(b, float)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> StatTest:
    """Exact McNemar test of paired outcomes ``a`` vs ``b`` (e.g. correct under two setups).

    ``details`` holds b (a true, b false), c (a false, b true) and the full 2×2 table.
    """
    from statsmodels.stats.contingency_tables import mcnemar

    x, y = _paired(a, b)
    x, y = x.astype(bool), y.astype(bool)
    table = [[int(np.sum(x & y)), int(np.sum(x & ~y))], [int(np.sum(~x & y)), int(np.sum(~x & ~y))]]
    b_, c_ = table[0][1], table[1][0]
    details = {"b": b_, "c": c_, "table": table}
    if b_ + c_ == 0:
        return StatTest.undefined("McNemar exact", "no discordant pairs", len(x), **details)
    res = mcnemar(table, exact=True)
    return StatTest.of("McNemar exact", res.statistic, res.pvalue, len(x), **details)


def wilcoxon_signed_rank(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> StatTest:
    """Two-sided Wilcoxon signed-rank test of ``a − b`` (zero differences dropped)."""
    from scipy import stats

    x, y = _paired(a, b)
    d = x - y
    if not np.any(d != 0):
        return StatTest.undefined("Wilcoxon signed-rank", "all differences are zero", len(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.wilcoxon(x, y, zero_method="wilcox", alternative="two-sided")
    return StatTest.of(
        "Wilcoxon signed-rank", float(res.statistic), float(res.pvalue), len(d),
        n_nonzero=int(np.sum(d != 0)),
    )


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def paired_permutation(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, n_resamples: int = 9999, seed: int = 0
) -> StatTest:
    """Two-sided paired permutation test of the mean difference ``mean(a − b)``."""
    from scipy import stats

    x, y = _paired(a, b)
    if len(x) == 0 or not np.any(x != y):
        return StatTest.undefined("paired permutation", "all differences are zero", len(x))
    res = stats.permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
        batch=resample_batch(len(x)),
    )
    exact = 2 ** len(x) <= n_resamples
    return StatTest.of(
        "paired permutation", res.statistic, res.pvalue, len(x),
        n_resamples=n_resamples, exact=exact, seed=seed,
    )


def cohens_d(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, paired: bool = True) -> Metric:
    """Cohen's d of ``a`` over ``b``: paired d_z, or independent d with the pooled SD.

    >>> round(cohens_d([3, 4, 5, 6], [2, 4, 3, 5]).value, 4)
    1.2247
    """
    if paired:
        x, y = _paired(a, b)
        d = x - y
        if len(d) < 2:
            return Metric.undefined("fewer than two pairs", n=len(d))
        sd = float(np.std(d, ddof=1))
        if sd == 0:
            return Metric.undefined("the differences do not vary", n=len(d))
        return Metric.of(float(np.mean(d)) / sd, n=len(d))
    x, y = np.asarray(a, float), np.asarray(b, float)
    n1, n2 = len(x), len(y)
    if n1 < 2 or n2 < 2:
        return Metric.undefined("each group needs two observations", n=n1 + n2)
    pooled = math.sqrt(((n1 - 1) * x.var(ddof=1) + (n2 - 1) * y.var(ddof=1)) / (n1 + n2 - 2))
    if pooled == 0:
        return Metric.undefined("no variance within the groups", n=n1 + n2)
    return Metric.of(float(x.mean() - y.mean()) / pooled, n=n1 + n2)


def two_proportion_ztest(successes_a: int, n_a: int, successes_b: int, n_b: int) -> StatTest:
    """Two-sided pooled z-test of p_a = p_b (what seed 000's code uses for CIA).

    >>> round(two_proportion_ztest(45, 50, 35, 50).p_value, 4)
    0.0124
    """
    from statsmodels.stats.proportion import proportions_ztest

    name = "two-proportion z-test"
    if n_a <= 0 or n_b <= 0:
        return StatTest.undefined(name, "a group has no observations", n_a + n_b)
    pooled = (successes_a + successes_b) / (n_a + n_b)
    if pooled in (0.0, 1.0):
        return StatTest.undefined(name, "pooled proportion is 0 or 1", n_a + n_b)
    z, p = proportions_ztest([successes_a, successes_b], [n_a, n_b])
    return StatTest.of(
        name, z, p, n_a + n_b, p_a=successes_a / n_a, p_b=successes_b / n_b
    )
