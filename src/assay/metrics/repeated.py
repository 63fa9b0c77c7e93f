"""Scores of repeated runs: per item, the mean over runs and its standard error.

RubricsTree averages every figure over 3 independent judge runs per item (App. B.4). An item
counts only when every run scored it: a run that failed on it leaves it unscored (``None``),
never a mean of the runs that happened to succeed. The standard error of an item is
``stdev(runs, ddof=1) / sqrt(runs)``; it is undefined (``None``) for a single run.

Example:
    >>> means, errors = mean_over_runs([{"a": 1.0, "b": 0.5}, {"a": 0.5, "b": None}])
    >>> means, errors
    ({'a': 0.75, 'b': None}, {'a': 0.25, 'b': None})
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def mean_over_runs(runs: Sequence[Mapping[str, float | None]]
                   ) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """Per item id (of any run): the mean score over ``runs`` and its standard error."""
    if not runs:
        raise ValueError("mean_over_runs needs at least one run")
    ids = list(dict.fromkeys(k for run in runs for k in run))
    means: dict[str, float | None] = {}
    errors: dict[str, float | None] = {}
    for item in ids:
        values = [run.get(item) for run in runs]
        if any(v is None for v in values):
            means[item] = errors[item] = None
            continue
        scores = [float(v) for v in values if v is not None]
        mean = sum(scores) / len(scores)
        means[item] = mean
        errors[item] = (math.sqrt(sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)
                                  / len(scores)) if len(scores) > 1 else None)
    return means, errors


def mean_error(errors: Mapping[str, float | None], ids: Sequence[str]) -> float | None:
    """The mean standard error over ``ids`` (None when any is undefined or there are none).

    >>> mean_error({"a": 0.1, "b": 0.3}, ["a", "b"])
    0.2
    """
    values = [errors.get(i) for i in ids]
    if not values or any(v is None for v in values):
        return None
    return round(sum(v for v in values if v is not None) / len(values), 12)
