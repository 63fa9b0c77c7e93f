"""A rubric: an ordered list of criteria with an id, guidelines and a version.

Example:
    >>> r = Rubric(id="bee-sting", criteria=[
    ...     {"id": "remove", "text": "Explains how to remove the stinger.", "weight": 7},
    ...     {"id": "tweezers", "text": "Recommends squeezing with tweezers.", "weight": -3}])
    >>> r.positive_total, [c.id for c in r.penalties]
    (7.0, ['tweezers'])

A criterion given without an id takes one derived from its text. Real HealthBench rubrics
sometimes state a criterion twice, word for word: every copy is kept, graded and counted (as
simple-evals does), the repeats taking positional ids (``c-…-2``, ``c-…-3``; see
:func:`~assay.rubric.criterion.positional_criterion_ids`), and :meth:`Rubric.duplicate_pairs`
lists them so readers can warn. Ids given explicitly must still be unique.

    >>> twice = Rubric(criteria=[{"text": "Advises rest."}, {"text": "advises  REST."}])
    >>> second = twice.criteria[1].id
    >>> second == twice.criteria[0].id + "-2", twice.duplicate_pairs()
    (True, [DuplicatePair(first=0, second=1, exact=False)])
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from assay.rubric.criterion import Criterion, derive_criterion_id, positional_criterion_ids


class DuplicatePair(NamedTuple):
    """Two criteria (by position) whose texts are equal, ``exact``ly or up to case and spacing."""

    first: int
    second: int
    exact: bool


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = "rubric"
    criteria: list[Criterion] = Field(min_length=1)
    guidelines: str | None = Field(default=None, description="Instructions shown to every judge.")
    version: str = "1"
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_criteria(self) -> Rubric:
        self._number_repeated_texts()
        # ctx["loc"] lets file readers point at the offending entry (see assay.io.errors).
        seen: dict[str, int] = {}
        for index, criterion in enumerate(self.criteria):
            if criterion.id in seen:
                raise PydanticCustomError(
                    "duplicate_criterion_id",
                    "duplicate criterion id '{id}' (same as criteria[{first}])",
                    {"id": criterion.id, "first": seen[criterion.id], "loc": ("criteria", index, "id")},
                )
            seen[criterion.id] = index
        if not any(c.weight > 0 for c in self.criteria):
            raise PydanticCustomError(
                "no_positive_weight",
                "the rubric has no criterion with a positive weight",
                {"loc": ("criteria",)},
            )
        return self

    def _number_repeated_texts(self) -> None:
        derived, bases = [], []
        for i, c in enumerate(self.criteria):
            base = derive_criterion_id(c.text)
            if c.id == base:
                derived.append(i)
                bases.append(base)
        if len(set(bases)) == len(bases):  # no text repeated: every id is already its own
            return
        wanted = positional_criterion_ids([self.criteria[i].text for i in derived])
        for index, criterion_id in zip(derived, wanted, strict=True):
            if self.criteria[index].id != criterion_id:  # a copy: the same object may be shared
                self.criteria[index] = self.criteria[index].model_copy(update={"id": criterion_id})

    def duplicate_pairs(self) -> list[DuplicatePair]:
        """Every pair of criteria stating the same requirement (same text up to case/spacing)."""
        by_text: dict[str, list[int]] = {}
        for index, criterion in enumerate(self.criteria):
            by_text.setdefault(derive_criterion_id(criterion.text), []).append(index)
        pairs = [DuplicatePair(a, b, self.criteria[a].text == self.criteria[b].text)
                 for group in by_text.values() for n, a in enumerate(group) for b in group[n + 1:]]
        return sorted(pairs)

    def criterion(self, criterion_id: str) -> Criterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(f"rubric {self.id!r} has no criterion {criterion_id!r}")

    @property
    def positive_total(self) -> float:
        return sum(c.weight for c in self.criteria if c.weight > 0)

    @property
    def penalties(self) -> list[Criterion]:
        return [c for c in self.criteria if c.is_penalty]
