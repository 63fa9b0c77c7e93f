"""Seeded bootstrap means, drawn in blocks so the memory stays bounded.

Example:
    >>> low_mean_high = mean_with_ci([0.2, 0.4, 0.6, 0.8], n_bootstrap=200)
    >>> low_mean_high[0], low_mean_high[1] <= 0.5 <= low_mean_high[2]
    (0.5, True)
"""

from __future__ import annotations

from collections.abc import Callable

BOOTSTRAP_CELLS = 1 << 20  # resampled values held at once (8 MB)


def bootstrap_means(values, n_bootstrap: int, draw: Callable[[int], object]):
    """The means of ``n_bootstrap`` resamples of ``values``; ``draw(rows)`` gives ``rows``
    resamples' indices. Drawn in blocks of about :data:`BOOTSTRAP_CELLS` values: NumPy's
    generators give the same numbers drawn in blocks of rows as all at once."""
    import numpy as np

    rows = max(1, BOOTSTRAP_CELLS // max(1, len(values)))
    return np.concatenate([values[draw(min(rows, n_bootstrap - start))].mean(axis=1)
                           for start in range(0, n_bootstrap, rows)]) if n_bootstrap else \
        np.empty(0)


def mean_with_ci(
    values: list[float], *, seed: int = 0, n_bootstrap: int = 1000, level: float = 0.95
) -> tuple[float | None, float | None, float | None]:
    """The mean and a seeded percentile-bootstrap CI; ``(None, None, None)`` with no values.

    The resamples are drawn a few rows at a time (the same draws as all at once), so the
    memory stays bounded: 1,000 resamples of 100,000 scores at once would take 800 MB.
    """
    if not values:
        return None, None, None
    import numpy as np

    array = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = bootstrap_means(array, n_bootstrap, lambda rows: rng.integers(0, len(array),
                                                                         size=(rows, len(array))))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(array.mean()), float(low), float(high)
