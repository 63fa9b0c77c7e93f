"""Reliability figures from sums over items: each equals the library (krippendorff, statsmodels)
or a hand computation on the data, and a resample's figure is the figure of the items it drew."""

from __future__ import annotations

import numpy as np
import pytest

from assay.metrics.reliability import fleiss_kappa as library_fleiss
from assay.metrics.reliability import icc as library_icc
from assay.metrics.reliability import krippendorff_alpha, percent_agreement
from assay.metrics.reliability_sums import (
    UnitTable,
    fleiss_kappa,
    icc,
    interval_alpha,
    nominal_alpha,
    ordinal_alpha,
    with_data,
)
from assay.metrics.reliability_sums import percent_agreement as summed_agreement


def _ratings(seed=0, units=30, raters=3, levels=4, missing=0.2):
    rng = np.random.default_rng(seed)
    table = rng.integers(0, levels, (units, raters))
    return [[None if rng.random() < missing else int(x) for x in row] for row in table]


def _table(rows):
    return UnitTable.of(list(enumerate(rows)), n_items=len(rows))


def _steps(rows):
    return UnitTable.of_steps(range(len(rows)), rows, n_items=len(rows))


def _by_rater(rows):
    return [list(column) for column in zip(*rows, strict=True)]


def test_nominal_alpha_equals_the_krippendorff_package():
    rows = _ratings()
    assert nominal_alpha(_table(rows), with_data(len(rows)))[0] == pytest.approx(
        krippendorff_alpha(_by_rater(rows), "nominal").value, abs=1e-12)


def test_ordinal_alpha_equals_the_krippendorff_package():
    rows = _ratings(seed=1)
    assert ordinal_alpha(_steps(rows), with_data(len(rows)), 4)[0] == pytest.approx(
        krippendorff_alpha(_by_rater(rows), "ordinal").value, abs=1e-12)


def test_interval_alpha_equals_the_krippendorff_package():
    rows = [[None if x is None else x / 3 for x in row] for row in _ratings(seed=2)]
    assert interval_alpha(rows, with_data(len(rows)))[0] == pytest.approx(
        krippendorff_alpha(_by_rater(rows), "interval").value, abs=1e-12)


def test_fleiss_kappa_equals_statsmodels_over_the_complete_units():
    rows = _ratings(seed=3)
    complete = [r for r in rows if None not in r]
    assert fleiss_kappa(_table(rows), with_data(len(rows)))[0] == pytest.approx(
        library_fleiss(complete).value, abs=1e-12)


def test_percent_agreement_equals_the_pairwise_formula():
    rows = _ratings(seed=4)
    assert summed_agreement(_table(rows), with_data(len(rows)))[0] == pytest.approx(
        percent_agreement(rows).value, abs=1e-12)


# A positive criterion c and a penalty criterion p, two judges, by hand:
# values c:MET ×2, c:UNMET ×2, p:MET ×3, p:UNMET ×1 (n = 8); one unit disagrees.
APART = [[("c", "MET"), ("c", "MET")], [("p", "MET"), ("p", "UNMET")],
         [("c", "UNMET"), ("c", "UNMET")], [("p", "MET"), ("p", "MET")]]
POOLED = UnitTable.of([(0, APART[0]), (0, APART[1]), (1, APART[2]), (1, APART[3])], n_items=2)


def test_pooled_alpha_keeps_each_criterions_labels_apart_by_hand():
    # α = 1 − (n − 1)·D / (n² − Σ n_c²) = 1 − 7·2 / (64 − 18) = 16/23 (shared labels: 8/15)
    assert nominal_alpha(POOLED, with_data(2))[0] == pytest.approx(16 / 23)
    assert krippendorff_alpha(_by_rater(APART)).value == pytest.approx(16 / 23)


def test_pooled_fleiss_kappa_keeps_each_criterions_labels_apart_by_hand():
    # P̄ = 3/4, P_e = (2² + 2² + 3² + 1²) / 8² = 18/64: κ = (3/4 − 18/64) / (1 − 18/64) = 15/23
    assert fleiss_kappa(POOLED, with_data(2))[0] == pytest.approx(15 / 23)
    assert library_fleiss(APART).value == pytest.approx(15 / 23)


def test_a_resamples_alpha_and_kappa_are_those_of_the_items_it_drew():
    rows = _ratings(seed=5, missing=0.0)
    drawn = np.array([0, 0, 0, 3, 7, 7] + list(range(8, 30)))
    weights = np.bincount(drawn, minlength=len(rows))[None, :].astype(float)
    again = [rows[i] for i in drawn]
    assert nominal_alpha(_table(rows), weights)[0] == pytest.approx(
        krippendorff_alpha(_by_rater(again)).value, abs=1e-12)
    assert ordinal_alpha(_steps(rows), weights, 4)[0] == pytest.approx(
        krippendorff_alpha(_by_rater(again), "ordinal").value, abs=1e-12)
    assert fleiss_kappa(_table(rows), weights)[0] == pytest.approx(
        library_fleiss(again).value, abs=1e-12)


def test_a_resamples_iccs_are_those_of_the_rows_it_drew():
    x = np.array(_ratings(seed=6, missing=0.0), float)
    drawn = np.array([1, 1, 2, 5, 5, 5] + list(range(6, 30)))
    weights = np.bincount(drawn, minlength=len(x))[None, :].astype(float)
    expected = library_icc(x[drawn])
    for name, values in icc(x, weights).items():
        assert values[0] == pytest.approx(expected[name].value, abs=1e-12), name
