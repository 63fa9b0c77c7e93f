"""Router (c): cosine similarity between the query and each entry's description; no model call.

RubricsTree's embedding baseline (App. D): embed the query (with the health memory, when any)
and every entry's description (taxonomy path, criterion, trigger condition) with the local
embedder, and keep the entries whose cosine similarity reaches one global threshold τ. The paper
tunes τ on a held-out set; :func:`tune_threshold` does that against expert selections. Entry
vectors are computed once per router.

Example::

    router = EmbeddingRouter(Catalogue.from_taxonomy(tree), threshold=0.35)
    routing = await router.route(item)        # no call: routing.calls == 0
    [(s.id, s.score) for s in routing.active]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.routing.base import Catalogue, Entry, Router, Selection, Trace, memory_text, query_text

DEFAULT_THRESHOLD = 0.35


class EmbeddingRouter(Router):
    kind = "embedding"

    def __init__(self, catalogue: Catalogue, *, threshold: float = DEFAULT_THRESHOLD,
                 embedder: Any = None, top_k: int | None = None):
        super().__init__(catalogue)
        if not -1 <= threshold <= 1:
            raise ValueError(f"a cosine threshold is in [-1, 1], got {threshold}")
        if embedder is None:
            from assay.embeddings import load_embedder

            embedder = load_embedder()
        self.embedder = embedder
        self.threshold = threshold
        self.top_k = top_k
        self._vectors = embedder.encode([e.description() for e in catalogue.entries])
        self._row = {e.id: i for i, e in enumerate(catalogue.entries)}

    def config(self) -> dict[str, Any]:
        return {**super().config(), "embedder": getattr(self.embedder, "model_id", "custom"),
                "threshold": self.threshold, "top_k": self.top_k}

    def similarities(self, query) -> dict[str, float]:
        """Cosine similarity of the query to every catalogue entry."""
        text = query_text(query)
        memory = memory_text(query)
        vector = self.embedder.encode([f"{text}\n{memory}" if memory else text])[0]
        scores = self._vectors @ vector
        return {e.id: float(scores[self._row[e.id]]) for e in self.catalogue.entries}

    async def select(self, query, eligible: list[Entry], trace: Trace) -> list[Selection]:
        scores = self.similarities(query)
        kept = sorted((e for e in eligible if scores[e.id] >= self.threshold),
                      key=lambda e: -scores[e.id])
        if self.top_k is not None:
            kept = kept[: self.top_k]
        return [Selection(id=e.id, score=round(scores[e.id], 4),
                          reason=f"cosine {scores[e.id]:.3f} >= {self.threshold}") for e in kept]


def tune_threshold(similarities: Sequence[Mapping[str, float]], expert: Sequence[set[str]],
                   grid: Sequence[float] | None = None) -> tuple[float, float]:
    """The τ on ``grid`` with the best pooled F1 against expert selections, and that F1.

    >>> tune_threshold([{"a": 0.9, "b": 0.2}, {"a": 0.1, "b": 0.6}], [{"a"}, {"b"}],
    ...                grid=[0.1, 0.5, 0.95])
    (0.5, 1.0)
    """
    grid = list(grid) if grid is not None else [round(x, 2) for x in np.arange(0.0, 0.96, 0.05)]
    best = (grid[0], -1.0)
    for tau in grid:
        tp = fp = fn = 0
        for scores, gold in zip(similarities, expert, strict=True):
            chosen = {k for k, v in scores.items() if v >= tau}
            tp += len(chosen & gold)
            fp += len(chosen - gold)
            fn += len(gold - chosen)
        f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
        if f1 > best[1]:
            best = (tau, f1)
    return best
