"""Reliability between raters (judges, runs, humans) without ground truth.

- :func:`icc`: the six Shrout & Fleiss (1979) intraclass correlations, each named:
  ICC(1,1), ICC(2,1), ICC(3,1) (single rater) and ICC(1,k), ICC(2,k), ICC(3,k) (mean of k
  raters), from the two-way ANOVA mean squares of an items × raters matrix. No installed
  library computes ICC (pingouin is not a dependency), so the formulas are written here and
  cross-checked in the tests against Shrout & Fleiss' Table 4 and statsmodels' ANOVA.
- :func:`krippendorff_alpha`: α at the nominal, ordinal, interval or ratio level
  (the ``krippendorff`` package); missing ratings allowed.
- :func:`fleiss_kappa`: Fleiss' κ (statsmodels) for units rated by the same number of raters.
- :func:`percent_agreement`: mean over rater pairs of the fraction of identical ratings.

Example:
    >>> ratings = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> round(icc(ratings)["ICC(3,1)"].value, 2)
    0.71
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np

from assay.metrics.reliability_sums import ICC_VARIANTS
from assay.metrics.results import Metric

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


def icc(ratings: Sequence[Sequence[float]]) -> dict[str, Metric]:
    """All six Shrout-Fleiss ICCs of an items × raters matrix (rows with a missing value dropped).

    Undefined (None with a reason) with fewer than two complete items or two raters, or when
    a denominator is zero (e.g. every rating is the same). The formulas are those of
    :func:`assay.metrics.reliability_sums.icc`, which also gives their bootstrap.
    """
    from assay.metrics.reliability_sums import icc as icc_sums
    from assay.metrics.reliability_sums import with_data

    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise ValueError("ratings must be a 2-D items × raters matrix")
    x = x[~np.isnan(x).any(axis=1)]
    n, k = x.shape if x.size else (0, x.shape[1] if x.ndim == 2 else 0)
    if n < 2 or k < 2:
        reason = f"needs ≥2 complete items and ≥2 raters (got {n} items, {k} raters)"
        return {v: Metric.undefined(reason, n=n) for v in ICC_VARIANTS}
    return {name: Metric.of(float(values[0]), n=n, reason="zero variance between items")
            for name, values in icc_sums(x, with_data(n)).items()}


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]], level: AlphaLevel = "nominal"
) -> Metric:
    """Krippendorff's α of a raters × units table (None = missing) at ``level``.

    Nominal labels may be any hashable values (they are mapped to integers); ordinal,
    interval and ratio data must be numbers (for ordinal, ranks or option steps).

    >>> krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 3]]).value
    1.0
    >>> krippendorff_alpha([["a", "a"], ["a", "a"]]).reason
    'fewer than two distinct values: α is undefined'
    """
    import krippendorff

    rows = [list(r) for r in reliability_data]
    if level == "nominal":
        domain = sorted({v for r in rows for v in r if v is not None}, key=repr)
        codes = {v: i for i, v in enumerate(domain)}
        data = np.array([[np.nan if v is None else codes[v] for v in r] for r in rows], float)
    else:
        data = np.array([[np.nan if v is None else float(v) for v in r] for r in rows], float)
    pairable = int((np.sum(~np.isnan(data), axis=0) >= 2).sum()) if data.size else 0
    if len(rows) < 2 or pairable == 0:
        return Metric.undefined("no unit was rated by two raters", n=pairable)
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return Metric.undefined("fewer than two distinct values: α is undefined", n=pairable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    return Metric.of(value, n=pairable, reason="no disagreement is expected by chance")


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> Metric:
    """Fleiss' κ of a units × raters table of labels (every unit rated by all raters).

    >>> round(fleiss_kappa([["a", "a", "b"], ["b", "b", "b"], ["a", "a", "a"]]).value, 3)
    0.55
    """
    from statsmodels.stats.inter_rater import aggregate_raters

    rows = [list(r) for r in ratings]
    if len(rows) < 2 or len(rows[0]) < 2:
        return Metric.undefined("needs ≥2 units and ≥2 raters", n=len(rows))
    domain = sorted({v for r in rows for v in r}, key=repr)
    codes = {v: i for i, v in enumerate(domain)}
    table, _ = aggregate_raters(np.array([[codes[v] for v in r] for r in rows]))
    return fleiss_table_kappa(table)


def fleiss_table_kappa(table: Sequence[Sequence[int]]) -> Metric:
    """Fleiss' κ of a units × categories table of counts (statsmodels)."""
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] < 2 or t.sum(axis=1).min() < 2:
        return Metric.undefined("needs ≥2 units and ≥2 raters", n=t.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = sm_fleiss(t, method="fleiss")
    return Metric.of(value, n=t.shape[0], reason="every rating is the same category")


def percent_agreement(ratings: Sequence[Sequence[Hashable | None]]) -> Metric:
    """Mean over rater pairs of the share of units both rated where they agree.

    ``ratings`` is units × raters (None = not rated).

    >>> percent_agreement([["a", "a"], ["a", "b"], ["b", "b"], ["a", None]]).value
    0.6666666666666666
    """
    rows = [list(r) for r in ratings]
    k = max((len(r) for r in rows), default=0)
    shares = []
    total = 0
    for i, j in itertools.combinations(range(k), 2):
        both = [(r[i], r[j]) for r in rows if r[i] is not None and r[j] is not None]
        if both:
            shares.append(sum(a == b for a, b in both) / len(both))
            total += len(both)
    if not shares:
        return Metric.undefined("no unit was rated by two raters")
    return Metric.of(float(np.mean(shares)), n=total)
