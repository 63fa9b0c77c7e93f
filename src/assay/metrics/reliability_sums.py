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
- :func:`gwet_ac1`: Gwet's AC1, ``(p_a − p_e) / (1 − p_e)`` with ``p_a`` the mean share of
  agreeing rater pairs over the units rated at least twice and
  ``p_e = Σ_c π_c (1 − π_c) / (q − 1)``, ``π_c`` the mean over rated units of the share of a
  unit's ratings in category c, ``q`` the categories of the scale (Gwet 2014, as irrCAC);
- :func:`percent_agreement`: the mean over rater pairs of the share of units both rated where
  they agree;
- :func:`icc`: the six Shrout-Fleiss ICCs (each resample an ANOVA on its drawn items).

Categories are any hashable values; only equal values agree, and chance agreement is computed
over the values themselves, pooled over every unit (as ``krippendorff.alpha`` and statsmodels'
``fleiss_kappa`` do on the same reliability data). A category is a column of a sparse
item × category table, so many units cost what their ratings cost. The tests check each figure
against the ``krippendorff`` package, statsmodels, irrCAC and hand-worked cases.

Example:
    >>> table = UnitTable.of([(0, ["a", "a"]), (1, ["a", "b"]), (2, ["b", "b"])], n_items=3)
    >>> round(float(nominal_alpha(table, with_data(3))[0]), 4)
    0.4444
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_CHUNK = 64  # resamples whose category totals are held at once


def with_data(n_items: int, resamples: np.ndarray | None = None) -> np.ndarray:
    """The weights of the data itself (a row of ones), then those of ``resamples`` if given."""
    ones = np.ones((1, n_items))
    return ones if resamples is None else np.vstack([ones, resamples])


@dataclass(frozen=True)
class UnitTable:
    """Units rated by the same raters: each unit's item and its ratings as category codes
    (``-1`` = not rated)."""

    items: np.ndarray  # (U,) item index of each unit
    codes: np.ndarray  # (U, raters) category code of each rating, -1 = not rated
    n_items: int

    @classmethod
    def of(cls, units: Sequence[tuple[int, Sequence[Hashable | None]]], n_items: int,
           raters: int | None = None) -> UnitTable:
        """From ``(item index, ratings)`` pairs, ratings being any hashable values (None = not
        rated); equal values are one category."""
        categories: dict[Hashable, int] = {}
        k = raters if raters is not None else max((len(r) for _, r in units), default=0)
        codes = np.full((len(units), k), -1, int)
        for u, (_, ratings) in enumerate(units):
            for j, value in enumerate(ratings):
                if value is not None:
                    codes[u, j] = categories.setdefault(value, len(categories))
        return cls(np.array([i for i, _ in units], int), codes, n_items)

    @classmethod
    def of_steps(cls, items: Sequence[int] | np.ndarray, steps: Sequence[Sequence[int | None]],
                 n_items: int) -> UnitTable:
        """Ordinal ratings: each unit's ratings as option steps ``0, 1, …`` (None = not
        rated), the steps being the category codes (:func:`ordinal_alpha` needs their order)."""
        codes = np.array([[-1 if x is None else x for x in row] for row in steps], int)
        return cls(np.asarray(items, int), codes.reshape(len(steps), -1), n_items)

    def subset(self, rows: np.ndarray) -> UnitTable:
        return UnitTable(self.items[rows], self.codes[rows], self.n_items)

    @property
    def raters(self) -> int:
        return self.codes.shape[1]

    def rated(self) -> np.ndarray:
        """(U,) how many raters rated each unit."""
        return (self.codes >= 0).sum(axis=1)

    def pair_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(U,) rater pairs that both rated each unit, and those of them that agree."""
        both = np.zeros(len(self.codes))
        same = np.zeros(len(self.codes))
        for i, j in itertools.combinations(range(self.raters), 2):
            rated = (self.codes[:, i] >= 0) & (self.codes[:, j] >= 0)
            both += rated
            same += rated & (self.codes[:, i] == self.codes[:, j])
        return both, same

    def per_item(self, values: np.ndarray) -> np.ndarray:
        """(n_items,) the sum of a per-unit value over each item's units."""
        return np.bincount(self.items, weights=values, minlength=self.n_items).astype(float)

    def category_counts(self, units: np.ndarray, each: np.ndarray | None = None) -> Any:
        """Sparse ``(n_items, categories)`` counts of the ratings of the ``units`` (a mask);
        ``each``: what one rating of each unit counts for (default 1)."""
        from scipy import sparse

        codes = self.codes[units]
        items = np.repeat(self.items[units], self.raters).reshape(codes.shape)
        rated = codes >= 0
        counts = (np.ones(codes.shape) if each is None
                  else np.repeat(each[units], self.raters).reshape(codes.shape))
        n_categories = int(self.codes.max(initial=-1)) + 1
        return sparse.csr_array((counts[rated], (items[rated], codes[rated])),
                                shape=(self.n_items, max(n_categories, 1)))


def _sum_of_squared_totals(counts: Any, weights: np.ndarray) -> np.ndarray:
    """``Σ_c (Σ_i w_i counts_ic)²`` for each row of ``weights``, a few rows at a time."""
    out = np.empty(len(weights))
    transposed = counts.T.tocsr()
    for start in range(0, len(weights), _CHUNK):
        totals = transposed @ weights[start:start + _CHUNK].T  # (categories, chunk)
        out[start:start + _CHUNK] = (totals**2).sum(axis=0)
    return out


def nominal_alpha(table: UnitTable, weights: np.ndarray) -> np.ndarray:
    """Krippendorff's α (nominal) of ``table`` under each row of ``weights``."""
    m = table.rated()
    pairable = m >= 2
    both, same = table.pair_counts()
    # m² − Σ_c n_uc² is twice the rater pairs of the unit that disagree
    observed = table.per_item(np.where(pairable, 2 * (both - same) / np.maximum(m - 1, 1), 0))
    n = weights @ table.per_item(np.where(pairable, m, 0).astype(float))
    expected = n * n - _sum_of_squared_totals(table.category_counts(pairable), weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * (weights @ observed) / expected, np.nan)


def ordinal_alpha(table: UnitTable, weights: np.ndarray, n_levels: int) -> np.ndarray:
    """Krippendorff's α (ordinal) of ``table``, whose category codes are the steps
    ``0 .. n_levels − 1``: the coincidence matrix is summed per item, and the ordinal distances
    (which depend on the category totals) are taken from each resample's own totals."""
    m = table.rated().astype(float)
    per_item = np.zeros((table.n_items, n_levels, n_levels))
    for i, j in itertools.permutations(range(table.raters), 2):
        ci, cj = table.codes[:, i], table.codes[:, j]
        pair = (ci >= 0) & (cj >= 0) & (m >= 2)
        np.add.at(per_item, (table.items[pair], ci[pair], cj[pair]), 1 / (m[pair] - 1))
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


def fleiss_kappa(table: UnitTable, weights: np.ndarray) -> np.ndarray:
    """Fleiss' κ over the units of ``table`` that every rater rated."""
    k = table.raters
    complete = table.rated() == k
    if k < 2 or not complete.any():
        return np.full(len(weights), np.nan)
    _, same = table.pair_counts()
    # a unit's agreement (Σ_c n_uc² − k) / (k(k − 1)) is its share of agreeing rater pairs
    units = weights @ table.per_item(complete.astype(float))
    observed = weights @ table.per_item(np.where(complete, 2 * same / (k * (k - 1)), 0))
    squares = _sum_of_squared_totals(table.category_counts(complete), weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = squares / (k * units) ** 2
        mean = observed / units
        return np.where((units > 0) & (chance < 1 - 1e-12), (mean - chance) / (1 - chance),
                        np.nan)


def gwet_ac1(table: UnitTable, weights: np.ndarray, n_categories: int) -> np.ndarray:
    """Gwet's AC1 of ``table`` under each row of ``weights``, on a scale of ``n_categories``
    (its q: every category a rating could take, used or not)."""
    m = table.rated()
    rated, pairable = m >= 1, m >= 2
    if n_categories < 2 or not pairable.any():
        return np.full(len(weights), np.nan)
    both, same = table.pair_counts()
    # a unit's Σ_c n_uc (n_uc − 1) / (m (m − 1)) is its share of agreeing rater pairs
    agreeing = weights @ table.per_item(np.where(pairable, same / np.maximum(both, 1), 0))
    n_pairable = weights @ table.per_item(pairable.astype(float))
    n_rated = weights @ table.per_item(rated.astype(float))
    shares = table.category_counts(rated, each=1 / np.maximum(m, 1)).T.tocsr()
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = (shares @ weights.T).T / n_rated[:, None]  # (B, categories)
        chance = (pi * (1 - pi)).sum(axis=1) / (n_categories - 1)
        observed = agreeing / n_pairable
        return np.where(n_pairable > 0, (observed - chance) / (1 - chance), np.nan)


def percent_agreement(table: UnitTable, weights: np.ndarray) -> np.ndarray:
    """Mean over rater pairs of the share of units both rated where they agree."""
    shares = []
    for i, j in itertools.combinations(range(table.raters), 2):
        ci, cj = table.codes[:, i], table.codes[:, j]
        both = (ci >= 0) & (cj >= 0)
        total = weights @ table.per_item(both.astype(float))
        agree = weights @ table.per_item((both & (ci == cj)).astype(float))
        with np.errstate(divide="ignore", invalid="ignore"):
            shares.append(np.where(total > 0, agree / total, np.nan))
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
