"""Reliability between raters as sums over items: one pass gives a figure and its bootstrap.

Every figure here is a ratio of sums over items, so weighting each item by how often a
bootstrap resample drew it gives that resample's figure without copying any data. Each function
takes ``weights``, a ``(B, n_items)`` array (one row per resample; a row of ones is the data
itself, see :func:`with_data`) and returns ``(B,)`` values, NaN where the figure is undefined.

- :func:`nominal_alpha`: Krippendorff's α at the nominal level,
  ``α = 1 − (n − 1) · Σ_u (m_u² − Σ_c n_uc²) / (m_u − 1) / (n² − Σ_c n_c²)``
  over the units rated at least twice (``m_u`` ratings, ``n_uc`` of category c; ``n``, ``n_c``
  over all such ratings);
- :func:`ordinal_alpha`: α at the ordinal level, from per-item coincidence matrices;
- :func:`interval_alpha`: α at the interval level, from the sums of values and squares;
- :func:`fleiss_kappa`: Fleiss' κ over units every rater rated;
- :func:`percent_agreement`: the mean over rater pairs of the share of units both rated where
  they agree;
- :func:`icc`: the six Shrout-Fleiss ICCs (each resample an ANOVA on its drawn items).

Categories are any hashable values; only equal values agree, so a category ``(criterion, label)``
keeps each criterion's labels apart. A category is a column of a sparse item × category table,
so a thousand criteria cost what their ratings cost. The tests check each figure against the
``krippendorff`` package, statsmodels and hand-worked cases.

Example:
    >>> table = UnitTable.of([(0, ["a", "a"]), (1, ["a", "b"]), (2, ["b", "b"])], n_items=3)
    >>> round(float(nominal_alpha(table, with_data(3))[0]), 4)
    0.4444
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

_CHUNK = 64  # resamples whose category totals are held at once


def with_data(n_items: int, resamples: np.ndarray | None = None) -> np.ndarray:
    """The weights of the data itself (a row of ones), then those of ``resamples`` if given."""
    ones = np.ones((1, n_items))
    return ones if resamples is None else np.vstack([ones, resamples])


@dataclass(frozen=True)
class UnitTable:
    """Units rated by the same raters: each unit's item and its ratings (None = not rated)."""

    items: np.ndarray  # (U,) item index of each unit
    ratings: list[list[Hashable | None]]  # U × raters
    n_items: int

    @classmethod
    def of(cls, units: Sequence[tuple[int, Sequence[Hashable | None]]], n_items: int) -> UnitTable:
        return cls(np.array([i for i, _ in units], int), [list(r) for _, r in units], n_items)


def _category_counts(items: np.ndarray, rows: Sequence[Sequence[Hashable]], n_items: int) -> Any:
    """Sparse ``(n_items, categories)`` counts of the ratings in ``rows`` (one row per unit)."""
    from scipy import sparse

    codes: dict[Hashable, int] = {}
    row_ix, col_ix = [], []
    for item, ratings in zip(items, rows, strict=True):
        for value in ratings:
            row_ix.append(item)
            col_ix.append(codes.setdefault(value, len(codes)))
    data = np.ones(len(row_ix))
    return sparse.csr_array((data, (row_ix, col_ix)), shape=(n_items, max(len(codes), 1)))


def _sum_of_squared_totals(counts: Any, weights: np.ndarray) -> np.ndarray:
    """``Σ_c (Σ_i w_i counts_ic)²`` for each row of ``weights``, a few rows at a time."""
    out = np.empty(len(weights))
    transposed = counts.T.tocsr()
    for start in range(0, len(weights), _CHUNK):
        totals = transposed @ weights[start:start + _CHUNK].T  # (categories, chunk)
        out[start:start + _CHUNK] = (totals**2).sum(axis=0)
    return out


def _per_item(items: np.ndarray, values: np.ndarray, n_items: int) -> np.ndarray:
    return np.bincount(items, weights=values, minlength=n_items).astype(float)


def nominal_alpha(table: UnitTable, weights: np.ndarray) -> np.ndarray:
    """Krippendorff's α (nominal) of ``table`` under each row of ``weights``."""
    rated = [[v for v in r if v is not None] for r in table.ratings]
    pairable = np.array([len(r) >= 2 for r in rated], bool)
    rows = [r for r, keep in zip(rated, pairable, strict=True) if keep]
    items = table.items[pairable]
    m = np.array([len(r) for r in rows], float)
    counts = _category_counts(items, rows, table.n_items)
    squares = np.array([sum(c * c for c in _value_counts(r)) for r in rows], float)
    observed = _per_item(items, (m * m - squares) / np.maximum(m - 1, 1), table.n_items)
    n = weights @ _per_item(items, m, table.n_items)
    expected = n * n - _sum_of_squared_totals(counts, weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * (weights @ observed) / expected, np.nan)


def ordinal_alpha(table: UnitTable, weights: np.ndarray, n_levels: int) -> np.ndarray:
    """Krippendorff's α (ordinal) of ``table``, whose ratings are steps ``0 .. n_levels − 1``:
    the coincidence matrix is summed per item, and the ordinal distances (which depend on the
    category totals) are taken from each resample's own totals."""
    per_item = np.zeros((table.n_items, n_levels, n_levels))
    for item, row in zip(table.items, table.ratings, strict=True):
        rated = np.bincount([cast(int, v) for v in row if v is not None], minlength=n_levels)
        m = rated.sum()
        if m >= 2:
            per_item[item] += (np.outer(rated, rated) - np.diag(rated)) / (m - 1)
    coincidences = (weights @ per_item.reshape(table.n_items, -1)).reshape(-1, n_levels,
                                                                            n_levels)
    totals = coincidences.sum(axis=2)  # (B, V)
    cumulative = np.cumsum(totals, axis=1)
    upper = cumulative[:, None, :] - cumulative[:, :, None]  # Σ_{c<g≤k} n_g for c < k
    delta = (upper + (totals[:, :, None] - totals[:, None, :]) / 2) ** 2
    n = totals.sum(axis=1)
    observed = (coincidences * delta).sum(axis=(1, 2))
    expected = (totals[:, :, None] * totals[:, None, :] * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 1e-12, 1 - (n - 1) * observed / expected, np.nan)


def _value_counts(values: Sequence[Hashable]) -> list[int]:
    from collections import Counter

    return list(Counter(values).values())


def fleiss_kappa(table: UnitTable, weights: np.ndarray) -> np.ndarray:
    """Fleiss' κ over the units of ``table`` that every rater rated."""
    complete = np.array([all(v is not None for v in r) for r in table.ratings], bool)
    rows = [r for r, keep in zip(table.ratings, complete, strict=True) if keep]
    items = table.items[complete]
    k = len(table.ratings[0]) if table.ratings else 0
    if not rows or k < 2:
        return np.full(len(weights), np.nan)
    agreement = np.array([(sum(c * c for c in _value_counts(r)) - k) / (k * (k - 1))
                          for r in rows], float)
    units = weights @ _per_item(items, np.ones(len(rows)), table.n_items)
    observed = weights @ _per_item(items, agreement, table.n_items)
    counts = _category_counts(items, rows, table.n_items)
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = _sum_of_squared_totals(counts, weights) / (k * units) ** 2
        mean = observed / units
        return np.where((units > 0) & (chance < 1 - 1e-12), (mean - chance) / (1 - chance),
                        np.nan)


def percent_agreement(table: UnitTable, weights: np.ndarray) -> np.ndarray:
    """Mean over rater pairs of the share of units both rated where they agree."""
    k = len(table.ratings[0]) if table.ratings else 0
    shares = []
    for i, j in itertools.combinations(range(k), 2):
        both = np.array([r[i] is not None and r[j] is not None for r in table.ratings], float)
        same = np.array([r[i] is not None and r[i] == r[j] for r in table.ratings], float)
        total = weights @ _per_item(table.items, both, table.n_items)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares.append(np.where(total > 0, (weights @ _per_item(table.items, same,
                                                                    table.n_items)) / total,
                                   np.nan))
    if not shares:
        return np.full(len(weights), np.nan)
    stacked = np.vstack(shares)
    defined = np.isfinite(stacked)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined.any(axis=0),
                        np.where(defined, stacked, 0).sum(axis=0) / defined.sum(axis=0), np.nan)


def interval_alpha(values: Sequence[Sequence[float | None]], weights: np.ndarray) -> np.ndarray:
    """Krippendorff's α (interval) of items × raters ``values`` (one unit per item)."""
    sums, squares, counts = (np.zeros(len(values)) for _ in range(3))
    for i, row in enumerate(values):
        rated = [float(v) for v in row if v is not None]
        if len(rated) >= 2:
            counts[i], sums[i], squares[i] = len(rated), sum(rated), sum(v * v for v in rated)
    with np.errstate(divide="ignore", invalid="ignore"):
        within = np.where(counts >= 2, 2 * (counts * squares - sums**2) / (counts - 1), 0.0)
        n, s1, s2 = weights @ counts, weights @ sums, weights @ squares
        expected = 2 * (n * s2 - s1**2)
        return np.where(expected > 1e-12, 1 - (n - 1) * (weights @ within) / expected, np.nan)


ICC_VARIANTS = ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)")
"""ICC(1,·): one-way random; ICC(2,·): two-way random, absolute agreement;
ICC(3,·): two-way mixed, consistency. ·,1 = single rater; ·,k = mean of the k raters."""


def icc(ratings: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The six Shrout & Fleiss (1979) ICCs of a complete items × raters matrix, from the
    two-way ANOVA mean squares of the items drawn (``weights``: how often each row is)."""
    x = np.asarray(ratings, float)
    k = x.shape[1]
    n = weights.sum(axis=1)
    rows = x.mean(axis=1)
    grand = weights @ rows / n
    columns = weights @ x / n[:, None]
    ss_total = weights @ (x**2).sum(axis=1) - k * n * grand**2
    ss_rows = k * (weights @ rows**2 - n * grand**2)
    ss_cols = n * ((columns - grand[:, None]) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        bms = ss_rows / (n - 1)
        wms = (ss_total - ss_rows) / (n * (k - 1))
        jms = ss_cols / (k - 1)
        ems = (ss_total - ss_rows - ss_cols) / ((n - 1) * (k - 1))
    formulas = {
        "ICC(1,1)": (bms - wms, bms + (k - 1) * wms),
        "ICC(2,1)": (bms - ems, bms + (k - 1) * ems + k * (jms - ems) / n),
        "ICC(3,1)": (bms - ems, bms + (k - 1) * ems),
        "ICC(1,k)": (bms - wms, bms),
        "ICC(2,k)": (bms - ems, bms + (jms - ems) / n),
        "ICC(3,k)": (bms - ems, bms),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        return {name: np.where(np.abs(den) > 1e-12, num / den, np.nan)
                for name, (num, den) in formulas.items()}
