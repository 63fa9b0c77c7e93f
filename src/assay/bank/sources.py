"""The criteria a bank is built from: every rubric item of HealthBench JSONL or rubric files.

Each :class:`SourceCriterion` keeps its provenance (file, prompt id, points, axis, level) so the
cluster report can show where a bank criterion came from and leakage can be audited.
Identical texts (HealthBench repeats its consensus criteria across conversations) are merged
into one entry whose ``count`` and ``prompt_ids`` keep every occurrence.

Example:
    >>> import pathlib
    >>> sources = read_source_criteria(["tests/data/healthbench/dev.jsonl"])
    >>> len(sources) > 500, sources[0].prompt_ids[:1] != []
    (True, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import InputError


@dataclass
class SourceCriterion:
    """One distinct criterion text and every place it occurred."""

    text: str
    points: list[float] = field(default_factory=list)
    axes: list[str] = field(default_factory=list)
    levels: list[str] = field(default_factory=list)
    prompt_ids: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.points)

    @property
    def negative_share(self) -> float:
        """The share of occurrences with negative points (undesirable behaviour)."""
        return sum(p < 0 for p in self.points) / len(self.points) if self.points else 0.0


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def read_source_criteria(
    paths: Sequence[str | Path], *, theme: str | None = None
) -> list[SourceCriterion]:
    """Distinct criteria of ``paths`` (HealthBench/item JSONL with rubrics, or rubric files),
    in first-seen order. ``theme`` keeps only items tagged ``theme:THEME`` (the paper used
    ``health_data_tasks``). Raises :class:`InputError` (file, line, field) on bad input."""
    merged: dict[str, SourceCriterion] = {}
    for path in paths:
        for prompt_id, criteria, source in _criteria_of(Path(path), theme):
            for c in criteria:
                entry = merged.setdefault(_key(c.text), SourceCriterion(text=c.text.strip()))
                entry.points.append(float(c.weight))
                entry.axes.append(c.axis or "")
                entry.levels.append(_level(c.tags))
                entry.prompt_ids.append(prompt_id)
                entry.sources.append(source)
    if not merged:
        wanted = f" tagged theme:{theme}" if theme else ""
        raise InputError(f"no criteria found in {', '.join(map(str, paths))}{wanted}")
    return list(merged.values())


def _level(tags: Iterable[str]) -> str:
    for tag in tags:
        if tag.startswith("level:"):
            return tag.split(":", 1)[1]
    return ""


def _criteria_of(path: Path, theme: str | None):
    from assay.io import read_rubric_file

    found = read_rubric_file(path)
    if found.shared is not None:
        if theme is None:
            yield found.shared.id, found.shared.criteria, str(path)
        return
    for item in found.items:
        if theme is None or f"theme:{theme}" in item.tags:
            assert item.rubric is not None  # a rubric file's items each carry their rubric
            yield item.id, item.rubric.criteria, str(path)
