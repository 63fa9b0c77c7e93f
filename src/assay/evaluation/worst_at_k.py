"""Worst-at-k reliability (HealthBench §6): the expected score of the worst of k answers.

For each example with K sampled answers, the worst-at-k score is the expected minimum score
over k answers drawn from its K without replacement; the curve averages it over examples for
k = 1..K. Worst-at-1 is the mean score; worst-at-K is the mean of each example's minimum. With
the example's scores sorted ascending, s(1) <= ... <= s(K), the expectation over all C(K, k)
subsets is exact, not simulated: the i-th smallest is the subset's minimum in C(K-i, k-1) of
them, so E[min] = sum_i s(i) * C(K-i, k-1) / C(K, k).

Example:
    >>> worst_at_k({"q1": [0.2, 0.8, 0.5], "q2": [1.0, 1.0, 0.0]})
    {1: 0.5833333333333333, 2: 0.31666666666666665, 3: 0.1}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb

from assay.errors import InputError, Issue


def expected_minimum(scores: Sequence[float], k: int) -> float:
    """The expected minimum of ``k`` of ``scores`` drawn without replacement.

    >>> expected_minimum([0.2, 0.8, 0.5], 2)
    0.3
    """
    ordered = sorted(scores)
    n = len(ordered)
    if not 1 <= k <= n:
        raise ValueError(f"k={k}: needs 1 <= k <= {n} answers")
    total = comb(n, k)
    return sum(s * comb(n - i, k - 1) for i, s in enumerate(ordered, 1)) / total


def worst_at_k(scores_by_example: Mapping[str, Sequence[float]]) -> dict[int, float]:
    """The worst-at-k curve, k = 1..K: every example must have the same number K of scores
    (a missing score is an error, never a smaller K for that example)."""
    if not scores_by_example:
        raise InputError(Issue("worst-at-k", None, None, "no scored example"))
    sizes = {len(scores) for scores in scores_by_example.values()}
    if len(sizes) != 1:
        short = sorted(k for k, v in scores_by_example.items() if len(v) < max(sizes))[:5]
        raise InputError(Issue("worst-at-k", None, None, "every example needs the same number "
                               f"of scored answers ({sorted(sizes)} found; short: "
                               f"{', '.join(short)})"))
    (n,) = sizes
    return {k: sum(expected_minimum(v, k) for v in scores_by_example.values())
            / len(scores_by_example) for k in range(1, n + 1)}
