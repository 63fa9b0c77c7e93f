"""The statistics of a rubric set that seed 000 reports for its released rubrics (§5.2).

Items in total; items per query (min / mean / max); negative (penalty) items; the mean over
queries of Σ positive points and of Σ |points|; items per axis (off-schema axes counted under
their own name and listed apart, as are zero-point items).

Example:
    >>> from assay.rubric_eval.released import RubricEntry, RubricSet
    >>> e = lambda p, a="accuracy": RubricEntry(criterion="c", axis=a, points=p)
    >>> s = rubric_stats(RubricSet("x", per_index={"0": [e(5), e(-3)], "1": [e(4, "safety")]}))
    >>> s.items, s.per_query_min, s.per_query_mean, s.negatives, s.mean_positive_points
    (3, 1, 1.5, 1, 4.5)
    >>> s.mean_abs_points, s.axis_counts, s.off_schema_axes
    (6.0, {'accuracy': 2, 'safety': 1}, ['safety'])
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from assay.rubric_eval.released import AXES, RubricSet


class RubricStats(BaseModel):
    model_config = ConfigDict(frozen=True)

    queries: int
    items: int
    per_query_min: int
    per_query_mean: float
    per_query_max: int
    negatives: int
    zero_points: int
    mean_positive_points: float  # mean over queries of Σ points > 0
    mean_abs_points: float  # mean over queries of Σ |points|
    axis_counts: dict[str, int]  # most frequent first, then by name
    off_schema_axes: list[str]  # axes outside seed 000's five


def rubric_stats(rubrics: RubricSet) -> RubricStats:
    """§5.2's statistics of ``rubrics`` (a shared rubric counts as one query)."""
    sets = list(rubrics.per_index.values()) or ([rubrics.shared] if rubrics.shared else [])
    if not sets:
        raise ValueError(f"{rubrics.source}: no rubric to describe")
    sizes = [len(s) for s in sets]
    entries = [e for s in sets for e in s]
    axes = Counter(e.axis or "(none)" for e in entries)
    return RubricStats(
        queries=len(sets),
        items=len(entries),
        per_query_min=min(sizes),
        per_query_mean=sum(sizes) / len(sets),
        per_query_max=max(sizes),
        negatives=sum(1 for e in entries if e.points < 0),
        zero_points=sum(1 for e in entries if e.points == 0),
        mean_positive_points=sum(e.points for e in entries if e.points > 0) / len(sets),
        mean_abs_points=sum(abs(e.points) for e in entries) / len(sets),
        axis_counts=dict(sorted(axes.items(), key=lambda kv: (-kv[1], kv[0]))),
        off_schema_axes=sorted(a for a in axes if a not in AXES),
    )
