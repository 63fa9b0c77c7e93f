"""Clustering criterion embeddings with scikit-learn, and picking each cluster's medoid.

Two algorithms, both threshold-based so that singleton clusters are possible (the paper: "some
rubrics formed individual clusters due to their high specificity"):

* ``agglomerative`` — :class:`sklearn.cluster.AgglomerativeClustering` on cosine distance with
  ``linkage`` (average by default) and a ``distance_threshold`` (or a fixed ``n_clusters``);
* ``hdbscan`` — :class:`sklearn.cluster.HDBSCAN` (``min_cluster_size``, ``min_samples``,
  ``cluster_selection_epsilon``) on cosine distance; its noise points become singletons.

Both are deterministic for the same vectors. Cluster numbers are canonical: by size (largest
first), ties by the first member's position, so the same input always gives the same labels.

Example:
    >>> import numpy as np
    >>> x = np.array([[1, 0], [0.99, 0.14], [0, 1], [0.1, 0.99]], dtype=np.float32)
    >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
    >>> cluster_embeddings(x, ClusterParams(distance_threshold=0.2)).tolist()
    [0, 0, 1, 1]
    >>> medoid(x, np.array([2, 3]))
    2
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np

from assay.errors import ConfigError

Method = Literal["agglomerative", "hdbscan"]


@dataclass(frozen=True)
class ClusterParams:
    """Every clustering parameter, exposed (and recorded in the bank's metadata)."""

    method: Method = "agglomerative"
    # Criteria without their instance details (assay.bank.generalise) that check one kind of
    # thing sit 0.3-0.5 apart in all-MiniLM-L6-v2; 0.45 was chosen on the 60 HealthBench dev
    # conversations (docs/health-score.md has the sweep).
    distance_threshold: float | None = 0.45
    n_clusters: int | None = None
    linkage: Literal["average", "complete", "single"] = "average"
    min_cluster_size: int = 3
    min_samples: int | None = None
    cluster_selection_epsilon: float = 0.0

    def __post_init__(self) -> None:
        if self.method not in ("agglomerative", "hdbscan"):
            raise ConfigError(f"unknown clustering method {self.method!r}; use agglomerative "
                              "or hdbscan")
        if self.method == "agglomerative" and (self.distance_threshold is None) == (
                self.n_clusters is None):
            raise ConfigError("agglomerative clustering needs exactly one of distance_threshold "
                              "and n_clusters")
        if self.min_cluster_size < 1:
            raise ConfigError("min_cluster_size must be at least 1")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cluster_embeddings(vectors: np.ndarray, params: ClusterParams) -> np.ndarray:
    """One canonical cluster number per row of ``vectors`` (unit rows)."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=int)
    if n == 1:
        return np.zeros(1, dtype=int)
    if params.method == "agglomerative":
        from sklearn.cluster import AgglomerativeClustering

        model = AgglomerativeClustering(
            n_clusters=params.n_clusters, distance_threshold=params.distance_threshold,
            metric="cosine", linkage=params.linkage)
        labels = model.fit_predict(vectors)
    else:
        from sklearn.cluster import HDBSCAN

        model = HDBSCAN(min_cluster_size=max(2, params.min_cluster_size),
                        min_samples=params.min_samples, metric="cosine",
                        cluster_selection_epsilon=params.cluster_selection_epsilon,
                        algorithm="brute", copy=True)
        labels = model.fit_predict(vectors.astype(np.float64))
        noise = np.flatnonzero(labels < 0)
        labels[noise] = labels.max() + 1 + np.arange(len(noise))
    return canonical_labels(labels)


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters by size (largest first), ties by first member position."""
    order: dict[int, tuple[int, int]] = {}
    for position, label in enumerate(labels.tolist()):
        size, first = order.get(label, (0, position))
        order[label] = (size + 1, first)
    ranked = sorted(order, key=lambda label: (-order[label][0], order[label][1]))
    mapping = {label: rank for rank, label in enumerate(ranked)}
    return np.array([mapping[label] for label in labels.tolist()], dtype=int)


def medoid(vectors: np.ndarray, members: np.ndarray, weights: np.ndarray | None = None) -> int:
    """The member (a row index) with the highest (weighted) mean cosine similarity to the
    others; ties go to the earliest row."""
    block = vectors[members]
    similarity = block @ block.T
    w = np.ones(len(members)) if weights is None else weights.astype(float)
    score = similarity @ w
    return int(members[int(np.argmax(np.round(score, 6)))])


def cluster_within_sign(vectors: np.ndarray, negative: np.ndarray,
                        params: ClusterParams) -> np.ndarray:
    """Canonical cluster numbers where desirable rows and undesirable rows (``negative``) are
    clustered separately: no cluster mixes a behaviour with its negation. A fixed
    ``n_clusters`` applies to each sign (at most its number of rows).

    >>> x = np.array([[1, 0], [1, 0], [1, 0.05]], dtype=np.float32)
    >>> cluster_within_sign(x, np.array([False, True, False]),
    ...                     ClusterParams(distance_threshold=0.2)).tolist()
    [0, 1, 0]
    """
    labels = np.zeros(len(vectors), dtype=int)
    offset = 0
    for mask in (~negative, negative):
        rows = np.flatnonzero(mask)
        if not len(rows):
            continue
        sign_params = params
        if params.n_clusters is not None and params.n_clusters > len(rows):
            sign_params = replace(params, n_clusters=len(rows))
        sub = cluster_embeddings(vectors[rows], sign_params)
        labels[rows] = sub + offset
        offset += int(sub.max()) + 1
    return canonical_labels(labels)


def merge_duplicate_clusters(labels: np.ndarray, vectors: np.ndarray, weights: np.ndarray,
                             negative: np.ndarray, threshold: float) -> tuple[np.ndarray, list[int]]:
    """Pool clusters of one sign whose medoids reach cosine ``threshold`` (semantic
    duplicates); ``labels`` come from :func:`cluster_within_sign`, so each cluster has one
    sign, the sign of ``negative`` at its rows. Returns the canonical labels of the pooled
    clusters and, per new label, how many clusters it pools.

    Greedy in cluster order (largest first): each cluster joins the first earlier surviving
    cluster of its sign whose medoid is close enough to its own, so chains of near neighbours
    do not snowball into one cluster.

    >>> x = np.array([[1, 0], [0.96, 0.28], [0, 1], [1, 0]], dtype=np.float32)
    >>> labels, pooled = merge_duplicate_clusters(np.array([0, 1, 2, 3]), x, np.ones(4),
    ...                                           np.array([False, False, False, True]), 0.9)
    >>> labels.tolist(), pooled
    ([0, 0, 1, 2], [2, 1, 1])
    """
    n_clusters = int(labels.max()) + 1 if len(labels) else 0
    rows = [np.flatnonzero(labels == c) for c in range(n_clusters)]
    centres = [medoid(vectors, r, weights[r]) for r in rows]
    target = list(range(n_clusters))
    survivors: list[int] = []
    for c in range(n_clusters):
        for s in survivors:
            if (negative[centres[c]] == negative[centres[s]]
                    and float(vectors[centres[c]] @ vectors[centres[s]]) >= threshold - 1e-6):
                target[c] = s
                break
        else:
            survivors.append(c)
    merged = canonical_labels(np.array([target[c] for c in labels.tolist()], dtype=int))
    pooled = [0] * (int(merged.max()) + 1 if len(merged) else 0)
    for c in range(n_clusters):
        pooled[int(merged[rows[c][0]])] += 1
    return merged, pooled
