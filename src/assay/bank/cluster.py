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

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from assay.errors import ConfigError

Method = Literal["agglomerative", "hdbscan"]


@dataclass(frozen=True)
class ClusterParams:
    """Every clustering parameter, exposed (and recorded in the bank's metadata)."""

    method: Method = "agglomerative"
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
