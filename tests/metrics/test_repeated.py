"""Per-item means and standard errors over repeated runs (RubricsTree averages 3)."""

from __future__ import annotations

import pytest

from assay.metrics.repeated import mean_error, mean_over_runs


def test_three_runs_give_the_mean_and_the_standard_error_of_each_item():
    means, errors = mean_over_runs([{"a": 1.0}, {"a": 0.5}, {"a": 0.75}])
    # stdev([1, .5, .75], ddof=1) = 0.25; / sqrt(3)
    assert means == {"a": 0.75} and errors["a"] == pytest.approx(0.25 / 3 ** 0.5)


def test_an_item_a_run_failed_on_is_unscored_not_averaged_over_the_others():
    means, errors = mean_over_runs([{"a": 1.0, "b": 1.0}, {"a": 1.0}, {"a": 1.0, "b": None}])
    assert means == {"a": 1.0, "b": None} and errors == {"a": 0.0, "b": None}


def test_one_run_has_no_standard_error():
    assert mean_over_runs([{"a": 0.5}]) == ({"a": 0.5}, {"a": None})
    assert mean_error({"a": None}, ["a"]) is None
