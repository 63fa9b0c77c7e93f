"""Reliability figures from sums over items: each equals the library (krippendorff, statsmodels,
irrCAC) or a published or hand computation on the data, and a resample's figure is the figure of
the items it drew."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.metrics.gwet_reference import reference_ac1

from assay.metrics.reliability import fleiss_kappa as library_fleiss
from assay.metrics.reliability import icc as library_icc
from assay.metrics.reliability import krippendorff_alpha, percent_agreement
from assay.metrics.reliability_sums import (
    UnitTable,
    fleiss_kappa,
    gwet_ac1,
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



def _ac1_data(name):
    return json.loads((Path(__file__).parent / "data" / name).read_text(encoding="utf-8"))


def test_ac1_reproduces_gwets_published_worked_example():
    example = _ac1_data("gwet_ac1_worked_example.json")
    rows = example["raters_by_unit"]
    value = gwet_ac1(_table(rows), with_data(len(rows)), len(example["categories"]))[0]
    assert round(float(value), 5) == example["ac1"]
    assert reference_ac1(rows, example["categories"]) == pytest.approx(value, abs=1e-12)


def test_ac1_equals_irrcacs_figures_on_random_tables_with_missing_ratings():
    reference = _ac1_data("gwet_ac1_irrcac.json")
    assert len(reference["tables"]) >= 5
    for case in reference["tables"]:
        rows = case["units"]
        value = gwet_ac1(_table(rows), with_data(len(rows)), len(case["categories"]))[0]
        assert value == pytest.approx(case["ac1"], abs=1e-12)


@pytest.mark.parametrize("seed, raters, levels, scale", [
    (0, 3, 2, 2), (1, 4, 3, 3), (2, 2, 4, 5), (3, 5, 2, 3), (4, 3, 4, 4)])
def test_ac1_equals_the_formula_written_out_on_random_tables(seed, raters, levels, scale):
    # scale > levels: categories of the scale that no rater used still count in q
    rows = _ratings(seed=seed, units=40, raters=raters, levels=levels, missing=0.3)
    assert gwet_ac1(_table(rows), with_data(len(rows)), scale)[0] == pytest.approx(
        reference_ac1(rows, range(scale)), abs=1e-12)


def test_a_resamples_ac1_is_that_of_the_items_it_drew():
    rows = _ratings(seed=7, missing=0.3)
    drawn = np.array([2, 2, 4, 4, 4, 9] + list(range(10, 30)))
    weights = np.bincount(drawn, minlength=len(rows))[None, :].astype(float)
    assert gwet_ac1(_table(rows), weights, 4)[0] == pytest.approx(
        reference_ac1([rows[i] for i in drawn], range(4)), abs=1e-12)
