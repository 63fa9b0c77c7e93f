"""Confidence intervals: seeded bootstrap (percentile or BCa) and Wilson score intervals.

The bootstrap is :func:`scipy.stats.bootstrap` with a generator seeded from ``seed``, so the
same data and seed always give the same interval. Resampling is over the first axis of the
data (items, pairs, or (item, criterion) pairs, whatever the caller passes); several
sequences are resampled together (``paired=True``).

Example:
    >>> m = bootstrap_ci([0.2, 0.4, 0.5, 0.9, 1.0], n_resamples=200, seed=7)
    >>> m.value, m.ci.method, m.ci == bootstrap_ci([0.2, 0.4, 0.5, 0.9, 1.0],
    ...                                            n_resamples=200, seed=7).ci
    (0.6, 'percentile', True)
    >>> w = proportion(8, 10)
    >>> round(w.ci.low, 4), round(w.ci.high, 4)
    (0.4902, 0.9433)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from assay.metrics.results import Interval, Metric

Method = Literal["percentile", "BCa", "basic"]
Sample = Sequence[float] | np.ndarray
_Vector = np.ndarray[tuple[int], np.dtype[np.float64]]


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


RESAMPLE_CELLS = 250_000
"""At most this many values in each of a batch's resampled arrays (2 MB of floats)."""


def resample_batch(n: int) -> int:
    """Resamples per batch of a bootstrap or permutation test on ``n`` observations, so that
    memory stays bounded on a run of any size; scipy draws the same resamples whatever the
    batch, so the result does not change (tests/metrics/test_uncertainty.py).

    >>> resample_batch(10), resample_batch(5000), resample_batch(10**7)
    (25000, 50, 1)
    """
    return max(1, RESAMPLE_CELLS // max(n, 1))


def bootstrap_ci(
    data: Sample | Sequence[Sample],
    statistic: Callable[..., np.ndarray] | None = None,
    *,
    paired: bool = False,
    n_resamples: int = 1000,
    seed: int = 0,
    method: Method = "percentile",
    level: float = 0.95,
) -> Metric:
    """The statistic on ``data`` with a seeded bootstrap CI.

    ``data`` is one sequence, or (with ``paired=True``) several equal-length sequences that
    are resampled together and passed to ``statistic`` as separate arguments. ``statistic``
    must accept ``axis`` (vectorised, like ``np.mean``); it defaults to the mean of one
    sequence. The value is None with a reason for empty data; the CI is None (with a reason)
    when every resample gives the same value (e.g. constant data, where BCa is undefined).
    """
    from scipy import stats

    samples: tuple[_Vector, ...] = (
        tuple(np.asarray(d, float) for d in data) if paired else (np.asarray(data, float),)
    )
    stat: Callable[..., np.ndarray] = statistic or _mean
    n = len(samples[0])
    if n == 0:
        return Metric.undefined("no data to bootstrap")
    value = float(stat(*samples, axis=-1))
    if not math.isfinite(value):
        return Metric.undefined("the statistic is undefined on this data", n=n)
    if n < 2:
        return Metric(value=value, n=n, reason="CI undefined: fewer than two observations")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            samples,
            stat,
            paired=paired,
            vectorized=True,
            n_resamples=n_resamples,
            confidence_level=level,
            method=method,
            rng=np.random.default_rng(seed),
            batch=resample_batch(n),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Metric(value=value, n=n, reason="CI undefined: the resamples do not vary")
    return Metric(value=value, n=n, ci=Interval(low=low, high=high, level=level, method=method))


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval | None:
    """Wilson score interval of a proportion (statsmodels); None when ``n`` is 0.

    >>> i = wilson_interval(0, 5)
    >>> i.low, round(i.high, 4)
    (0.0, 0.4345)
    """
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        return None
    low, high = proportion_confint(successes, n, alpha=1 - level, method="wilson")
    return Interval(low=max(0.0, float(low)), high=min(1.0, float(high)), level=level,
                    method="wilson")


def proportion(successes: int, n: int, level: float = 0.95) -> Metric:
    """A proportion with its Wilson interval; undefined when ``n`` is 0."""
    if n <= 0:
        return Metric.undefined("no observations")
    return Metric(value=successes / n, n=n, ci=wilson_interval(successes, n, level))
