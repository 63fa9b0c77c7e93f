"""How well a bank covers a reference criterion set, measured one-to-one.

Each reference criterion may be matched to at most one bank criterion and each bank criterion
to at most one reference criterion (a maximum bipartite matching, SciPy's
:func:`~scipy.optimize.linear_sum_assignment`), so six wordings of "seek urgent care" cover one
reference criterion, not six. The matching is the one with the highest total cosine similarity
of the texts' embeddings (the best alignment, found without looking at the threshold); a
matched pair counts when its similarity reaches ``threshold``. Maximising the number of pairs
over the threshold instead would reward low-similarity pairings made only to be counted.

The honest yardstick beside it is :func:`most_frequent`: the same number of source criteria
picked by how often they recur (the builder has to beat that to be worth running).

Example:
    >>> import numpy as np
    >>> ref = np.array([[1, 0], [0, 1]], dtype=np.float32)
    >>> bank = np.array([[1, 0], [0.99, 0.14]], dtype=np.float32)   # two copies of one idea
    >>> c = one_to_one_coverage(["r1", "r2"], ref, ["b1", "b2"], bank, threshold=0.5)
    >>> c.matched, c.share, [(m.reference, m.candidate) for m in c.matches]
    (1, 0.5, [('r1', 'b1')])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from assay.bank.sources import SourceCriterion
from assay.errors import ConfigError
from assay.rubric import Rubric

DEFAULT_THRESHOLD = 0.7
"""Cosine similarity (all-MiniLM-L6-v2) at which two criteria count as the same idea: on
HealthBench, pairs at 0.6–0.65 often share only a template or a style ("Step 1: Does the
response ..."), pairs at 0.7 and above mostly state the same check."""


@dataclass(frozen=True)
class Match:
    reference: str
    candidate: str
    similarity: float


@dataclass(frozen=True)
class Coverage:
    """``matched`` of ``reference_size`` reference criteria have a one-to-one partner among
    ``candidates`` criteria at ``threshold`` or above."""

    reference_size: int
    candidates: int
    threshold: float
    matched: int
    matches: list[Match] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.matched / self.reference_size if self.reference_size else 0.0

    @property
    def mean_similarity(self) -> float:
        """Mean similarity of the counted pairs (0 when none)."""
        return (sum(m.similarity for m in self.matches) / len(self.matches)
                if self.matches else 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"reference_size": self.reference_size, "candidates": self.candidates,
                "threshold": self.threshold, "matched": self.matched,
                "share": round(self.share, 4), "mean_similarity": round(self.mean_similarity, 4),
                "matches": [asdict(m) for m in self.matches]}


def one_to_one_coverage(reference_ids: Sequence[str], reference: np.ndarray,
                        candidate_ids: Sequence[str], candidates: np.ndarray, *,
                        threshold: float = DEFAULT_THRESHOLD) -> Coverage:
    """The one-to-one coverage of ``reference`` (unit rows) by ``candidates`` (unit rows)."""
    from scipy.optimize import linear_sum_assignment

    if not 0 < threshold <= 1:
        raise ConfigError(f"coverage threshold must be in (0, 1], not {threshold}")
    if len(reference_ids) != len(reference) or len(candidate_ids) != len(candidates):
        raise ConfigError("one id per embedding row is needed on both sides")
    if not len(reference) or not len(candidates):
        return Coverage(len(reference), len(candidates), threshold, 0)
    similarity = np.asarray(reference @ candidates.T, dtype=float)
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    matches = [Match(reference_ids[r], candidate_ids[c], round(float(similarity[r, c]), 4))
               for r, c in zip(rows.tolist(), cols.tolist())
               if similarity[r, c] >= threshold - 1e-6]
    return Coverage(len(reference), len(candidates), threshold, len(matches), matches)


def most_frequent(sources: Sequence[SourceCriterion], n: int) -> list[SourceCriterion]:
    """The frequency baseline: the ``n`` source criteria occurring in the most rubric items,
    ties broken by more conversations, then first seen.

    >>> a, b = SourceCriterion("A", [1]), SourceCriterion("B", [1, 1], prompt_ids=["p", "q"])
    >>> [s.text for s in most_frequent([a, b], 1)]
    ['B']
    """
    order = sorted(range(len(sources)),
                   key=lambda i: (-sources[i].count, -len(set(sources[i].prompt_ids)), i))
    return [sources[i] for i in order[:n]]


@dataclass(frozen=True)
class BankCoverage:
    """A bank's coverage of a reference set beside the frequency baseline of the same size."""

    reference: str
    bank: Coverage
    most_frequent: Coverage

    def to_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "bank": self.bank.to_dict(),
                "most_frequent": self.most_frequent.to_dict()}


def bank_coverage(bank: Rubric, sources: Sequence[SourceCriterion], reference: Rubric,
                  embedder: Any, *, threshold: float = DEFAULT_THRESHOLD) -> BankCoverage:
    """How many of ``reference``'s criteria ``bank`` covers one-to-one, and how many the
    ``len(bank.criteria)`` most frequent of ``sources`` (what the bank was built from) cover.
    Baseline criteria are named ``source-N`` by their rank."""
    ref_ids = [c.id for c in reference.criteria]
    ref_vectors = embedder.encode([c.text for c in reference.criteria])
    baseline = most_frequent(sources, len(bank.criteria))
    return BankCoverage(
        reference=f"{reference.id} {reference.version}".strip(),
        bank=one_to_one_coverage(ref_ids, ref_vectors, [c.id for c in bank.criteria],
                                 embedder.encode([c.text for c in bank.criteria]),
                                 threshold=threshold),
        most_frequent=one_to_one_coverage(
            ref_ids, ref_vectors, [f"source-{i}" for i in range(1, len(baseline) + 1)],
            embedder.encode([s.text for s in baseline]), threshold=threshold))
