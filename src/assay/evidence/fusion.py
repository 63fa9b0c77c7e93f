"""Reciprocal-rank fusion: one ranking from several (Cormack, Clarke & Büttcher, SIGIR 2009).

Each ranking contributes ``1 / (k + rank)`` to every id it ranks (rank counted from 1), with
``k = 60`` as in the original paper. Ties break by first appearance, so the result is
deterministic.

Example:
    >>> fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c"]])
    >>> [(i, round(s, 5)) for i, s in fused]
    [('b', 0.03252), ('c', 0.032), ('a', 0.01639)]
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], *, k: int = RRF_K
                           ) -> list[tuple[str, float]]:
    """``(id, fused score)`` pairs, best first."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
