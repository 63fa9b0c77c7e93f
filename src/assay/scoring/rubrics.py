"""Which rubric scores which item: the one item → rubric lookup of every scorer.

An item scores against its own rubric when it has one (HealthBench rows, a run's stored
rubrics), else against the shared rubric; with neither, it has no rubric (``None``), and each
caller decides what that means (``assay score`` refuses the item, the metrics leave it out).

Example:
    >>> from assay.rubric import Rubric
    >>> shared = Rubric(id="shared", criteria=[{"id": "a", "text": "States the dose."}])
    >>> own = Rubric(id="own", criteria=[{"id": "b", "text": "Advises a doctor."}])
    >>> rubrics = ItemRubrics(shared=shared, per_item={"q2": own})
    >>> rubrics.rubric("q1").id, rubrics.rubric("q2").id, ItemRubrics().rubric("q1")
    ('shared', 'own', None)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from assay.rubric.criterion import Criterion
from assay.rubric.rubric import Rubric


@dataclass
class ItemRubrics:
    """The rubric of each item: per-item rubrics, else a shared one."""

    shared: Rubric | None = None
    per_item: dict[str, Rubric] = field(default_factory=dict)

    @classmethod
    def of(cls, rubrics: ItemRubrics | Rubric) -> ItemRubrics:
        """``rubrics`` itself, or a single rubric shared by every item."""
        return rubrics if isinstance(rubrics, ItemRubrics) else cls(shared=rubrics)

    def rubric(self, item_id: str) -> Rubric | None:
        return self.per_item.get(item_id, self.shared)

    def criteria(self, item_id: str) -> Sequence[Criterion] | None:
        rubric = self.rubric(item_id)
        return rubric.criteria if rubric is not None else None

    def criteria_by_item(self, item_ids: Iterable[str]) -> dict[str, Sequence[Criterion]]:
        """Item id → criteria for the items of ``item_ids`` that have a rubric."""
        out = {}
        for item_id in item_ids:
            criteria = self.criteria(item_id)
            if criteria is not None:
                out[item_id] = criteria
        return out
