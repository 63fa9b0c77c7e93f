"""Two verdict sets compared item by item: where a regression is.

Each item both sides graded gets its score on each side (the one item scorer, under one rubric
and one formula for both), the difference B − A, and each criterion's verdict in A and in B;
a criterion *flipped* when its two verdicts differ. ``assay compare --items`` and the report's
item-by-item view show these; the paired tests of :mod:`assay.metrics.compare` say whether
the differences add up to more than chance.

Example:
    >>> from assay.rubric import Criterion
    >>> from assay.verdict import Verdict
    >>> criteria = [Criterion(id="a", text="States the dose.", weight=2),
    ...             Criterion(id="b", text="Advises a doctor.", weight=2)]
    >>> side = lambda a, b: [Verdict(item_id="q1", criterion_id="a", decision=a),
    ...                      Verdict(item_id="q1", criterion_id="b", decision=b)]
    >>> change = item_change("q1", criteria, side("MET", "MET"), side("MET", "UNMET"))
    >>> change.score_a, change.score_b, change.difference, change.flipped
    (1.0, 0.5, -0.5, 1)
    >>> [(c.criterion_id, c.a, c.b) for c in change.criteria if c.flipped]
    [('b', 'MET', 'UNMET')]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, computed_field

from assay.metrics.scores import item_scores
from assay.metrics.sources import Rubrics
from assay.rubric.criterion import Criterion
from assay.verdict import Verdict


class CriterionChange(BaseModel):
    """One criterion's verdict on each side (its option label for a multi-choice criterion;
    None: no verdict on that side)."""

    model_config = ConfigDict(frozen=True)

    criterion_id: str
    text: str
    weight: float
    a: str | None
    b: str | None

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented way
    @property
    def flipped(self) -> bool:
        return self.a != self.b


class ItemChange(BaseModel):
    """One item on both sides: its scores, B − A, and its criteria's verdicts."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    score_a: float | None
    score_b: float | None
    criteria: list[CriterionChange]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def difference(self) -> float | None:
        """B − A (None unless both sides scored the item)."""
        if self.score_a is None or self.score_b is None:
            return None
        return self.score_b - self.score_a

    @computed_field  # type: ignore[prop-decorator]
    @property
    def flipped(self) -> int:
        """How many criteria have a different verdict in B."""
        return sum(c.flipped for c in self.criteria)

    @property
    def changed(self) -> bool:
        """A score or a verdict differs between the sides."""
        return bool(self.flipped) or self.score_a != self.score_b


def item_change(item_id: str, criteria: Sequence[Criterion], verdicts_a: Iterable[Verdict],
                verdicts_b: Iterable[Verdict], *, formula: str = "autorubric",
                abstention: Any = None) -> ItemChange:
    """One item compared: ``verdicts_a`` and ``verdicts_b`` are each side's verdicts on it,
    both scored against ``criteria`` by ``formula`` and ``abstention``."""
    listed_a, listed_b = list(verdicts_a), list(verdicts_b)
    known = {item_id: criteria}  # the scorer refuses two verdicts on one criterion
    score_a = item_scores(known, listed_a, formula=formula, abstention=abstention).get(item_id)
    score_b = item_scores(known, listed_b, formula=formula, abstention=abstention).get(item_id)
    a, b = _by_criterion(listed_a), _by_criterion(listed_b)
    return ItemChange(item_id=item_id, score_a=score_a, score_b=score_b, criteria=[
        CriterionChange(criterion_id=c.id, text=c.text, weight=c.weight,
                        a=_label(a.get(c.id)), b=_label(b.get(c.id)))
        for c in criteria])


def item_changes(verdicts_a: Iterable[Verdict], verdicts_b: Iterable[Verdict], rubrics: Rubrics,
                 *, formula: str = "autorubric", abstention: Any = None) -> list[ItemChange]:
    """Every item that both sides have a verdict on and ``rubrics`` knows, in item id order,
    each scored under its rubric (see :func:`item_change`)."""
    side_a, side_b = _by_item(verdicts_a), _by_item(verdicts_b)
    changes = []
    for item_id in sorted(side_a.keys() & side_b.keys()):
        criteria = rubrics.criteria(item_id)
        if criteria:
            changes.append(item_change(item_id, criteria, side_a[item_id], side_b[item_id],
                                       formula=formula, abstention=abstention))
    return changes


def _by_item(verdicts: Iterable[Verdict]) -> dict[str, list[Verdict]]:
    out: dict[str, list[Verdict]] = {}
    for v in verdicts:
        out.setdefault(v.item_id, []).append(v)
    return out


def _by_criterion(verdicts: Iterable[Verdict]) -> dict[str, Verdict]:
    return {v.criterion_id: v for v in verdicts}


def _label(verdict: Verdict | None) -> str | None:
    if verdict is None:
        return None
    return verdict.option if verdict.option is not None else str(verdict.decision)
