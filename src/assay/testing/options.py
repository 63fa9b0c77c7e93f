"""How the fake judge answers a multi-choice criterion when its policy says MET or UNMET.

The fake judge is a rule-based stand-in, not a model. A policy answers ``MET``, ``UNMET``,
``CANNOT_ASSESS`` or an option label; on an ordinal or nominal criterion a binary answer has to
become an option, and only the rubric knows the options' values (the prompt shows labels in a
shuffled order). Given the rubrics, the fake judge maps them deliberately:

* ``MET`` → the option with the highest value (the best for a desirable criterion; for a penalty
  criterion, as for a binary one, MET means the undesirable thing fully happened);
* ``UNMET`` → the option with the lowest value;
* a label → that option; ``CANNOT_ASSESS`` → no option (the reply's 0).

Ties go to the option listed first in the rubric; ``na`` options are never chosen for MET/UNMET.
Without the criterion's rubric a binary answer cannot be placed, and the fake judge says so in
its explanation and answers CANNOT_ASSESS instead of picking an option silently.

Example:
    >>> from assay.rubric import Rubric
    >>> from assay.testing.prompts import CriterionView
    >>> rubric = Rubric(criteria=[{"id": "pain", "text": "Pain relief?", "kind": "ordinal",
    ...     "options": [{"label": "n/a", "na": True}, {"label": "poorly", "value": 0},
    ...                 {"label": "well", "value": 1}]}])
    >>> scales = option_scales([rubric])
    >>> view = CriterionView("pain", "Pain relief?", "ok", options=("n/a", "well", "poorly"))
    >>> answer = resolve_answer("MET", view, scales)
    >>> answer, answer.reason
    ('well', "MET → 'well', the option with the highest value")
    >>> resolve_answer("UNMET", view, scales)
    'poorly'
    >>> resolve_answer("MET", view, {}).reason.startswith("MET has no option")
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from assay.rubric import Criterion, Rubric
from assay.testing.prompts import CriterionView

RubricSource = Rubric | str | Path


class ResolvedAnswer(str):
    """The answer the fake judge gives, with the rule that produced it (for the explanation)."""

    reason: str | None

    def __new__(cls, answer: str, reason: str | None = None) -> Self:
        resolved = super().__new__(cls, answer)
        resolved.reason = reason
        return resolved


@dataclass(frozen=True)
class OptionScale:
    """The option labels a binary answer maps to on one multi-choice criterion."""

    highest: str
    lowest: str

    @classmethod
    def of(cls, criterion: Criterion) -> OptionScale:
        scored = [(o.label, o.value) for o in criterion.options if not o.na and o.value is not None]
        best = max(scored, key=lambda o: o[1])  # max/min keep the first of equals
        worst = min(scored, key=lambda o: o[1])
        return cls(best[0], worst[0])


def option_scales(sources: Iterable[RubricSource] | RubricSource | None) -> dict[str, OptionScale]:
    """``{criterion id or text: OptionScale}`` for the multi-choice criteria of ``sources``:
    :class:`Rubric` objects, rubric files, or item/HealthBench files with per-item rubrics."""
    if sources is None:
        return {}
    if isinstance(sources, Rubric | str | Path):
        sources = [sources]
    scales: dict[str, OptionScale] = {}
    for rubric in _rubrics(sources):
        for criterion in rubric.criteria:
            if criterion.is_multi_choice:
                scale = OptionScale.of(criterion)
                scales.setdefault(criterion.id, scale)
                scales.setdefault(criterion.text.strip(), scale)
    return scales


def resolve_answer(answer: str, view: CriterionView, scales: dict[str, OptionScale]) -> ResolvedAnswer:
    """The answer to give for ``view``: binary answers on multi-choice criteria become options."""
    if not view.options or answer not in ("MET", "UNMET"):
        return ResolvedAnswer(answer)
    scale = scales.get(view.criterion_id or "") or scales.get((view.criterion_text or "").strip())
    if scale is None:
        return ResolvedAnswer("CANNOT_ASSESS", (
            f"{answer} has no option on a multi-choice criterion unless the fake judge knows its "
            "rubric (FakeJudgeServer(rubrics=...), assay fake-judge --rubric FILE); "
            "answered CANNOT_ASSESS"))
    label, which = (scale.highest, "highest") if answer == "MET" else (scale.lowest, "lowest")
    return ResolvedAnswer(label, f"{answer} → {label!r}, the option with the {which} value")


def _rubrics(sources: Iterable[RubricSource]) -> Iterable[Rubric]:
    from assay.io import read_rubric_file

    for source in sources:
        if isinstance(source, Rubric):
            yield source
            continue
        found = read_rubric_file(source)
        yield from ([found.shared] if found.shared is not None else found.per_item.values())
