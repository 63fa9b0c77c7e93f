"""One item as the report and the review app show it: its conversation, its response and each
criterion's final verdict with every judge's vote and any human label.

Each criterion also carries its *value* after the run's abstention strategy (1 met, 0 unmet,
an option's value, None when it is left out), so that an item says how many points it earned
of those possible and which criteria cost it the most, as the scoring core counts them
(:func:`assay.scoring.score_points`: earned is Σ value·weight, possible the positive weights
counted).

>>> rows = [CriterionRow("a", "States the dose.", 6.0, None, "MET", value=1.0),
...         CriterionRow("b", "Advises a doctor.", 4.0, None, "UNMET", value=0.0),
...         CriterionRow("p", "Recommends an unsafe dose.", -5.0, None, "MET", value=1.0)]
>>> item = ItemRow(0, "q1", [("user", "How much?")], "Take 10 g.", 0.1, [], rows)
>>> item.points, [(c.id, c.points_lost) for c in item.by_points_lost()]
((1.0, 10.0), [('p', 5.0), ('b', 4.0), ('a', 0.0)])
>>> preview([("user", "First turn."), ("assistant", "…"), ("user", "  Last   turn. ")], "")
'Last turn.'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assay.report.meaning import option_meaning, shown_label, verdict_label
from assay.scoring.formulas import criterion_value

if TYPE_CHECKING:
    from assay.grading.aggregate import Aggregated
    from assay.item import Item
    from assay.rubric import Rubric
    from assay.scoring import Abstention
    from assay.verdict import Verdict

PREVIEW_CHARS = 160


@dataclass(frozen=True)
class Vote:
    """One judge's (or one human's) answer on one criterion."""

    source: str
    label: str
    explanation: str


@dataclass
class CriterionRow:
    id: str
    text: str
    weight: float
    axis: str | None
    final: str | None
    votes: list[Vote] = field(default_factory=list)
    human: list[Vote] = field(default_factory=list)
    value: float | None = None
    """The final verdict's value after the abstention strategy; None: left out of the score."""
    options: Mapping[str, float] = field(default_factory=dict)
    """A multi-choice criterion's option values by label (N/A options left out); {} if binary."""

    @property
    def meaning(self) -> str:
        """What the final verdict means for the answer (:mod:`assay.report.meaning`)."""
        return self.meaning_of(self.final)

    def meaning_of(self, label: str | None) -> str:
        """What ``label`` (a vote's, a human's) would mean for the answer on this criterion."""
        return option_meaning(label, self.weight, self.options)

    def shown(self, label: str | None) -> str:
        """``label`` as a reader sees it (DETECTED / CLEAR on a penalty)."""
        return shown_label(label, self.weight)

    @property
    def judges_disagree(self) -> bool:
        return len({v.label for v in self.votes}) > 1

    @property
    def human_disagrees(self) -> bool:
        return bool(self.human) and self.final is not None and any(
            h.label != self.final for h in self.human)

    @property
    def points_lost(self) -> float:
        """Points this criterion cost the answer: a positive criterion's unearned share, a
        penalty's met share (0 when it is left out of the score)."""
        if self.value is None:
            return 0.0
        return self.weight * (1.0 - self.value) if self.weight > 0 else -self.weight * self.value


@dataclass
class ItemRow:
    index: int
    id: str
    conversation: list[tuple[str, str]]
    response: str
    score: float | None
    tags: list[str]
    criteria: list[CriterionRow]
    context: list[tuple[str, str]] = field(default_factory=list)
    """Retrieved passages shown to the judge, as (label, text)."""

    @property
    def disagreements(self) -> int:
        return sum(c.judges_disagree or c.human_disagrees for c in self.criteria)

    @property
    def themes(self) -> list[str]:
        return [t.split(":", 1)[1] for t in self.tags if t.startswith("theme:")]

    @property
    def points(self) -> tuple[float, float]:
        """(points earned, points possible) over the criteria the score counts."""
        counted = [c for c in self.criteria if c.value is not None]
        return (sum(c.value * c.weight for c in counted if c.value is not None),
                sum(c.weight for c in counted if c.weight > 0))

    def by_points_lost(self) -> list[CriterionRow]:
        """The criteria, those that cost the most points first (ties: in rubric order)."""
        return sorted(self.criteria, key=lambda c: -c.points_lost)

    @property
    def preview(self) -> str:
        return preview(self.conversation, self.response)


def preview(conversation: list[tuple[str, str]], response: str) -> str:
    """The last user turn (or the response), on one line, at most :data:`PREVIEW_CHARS`."""
    users = [text for role, text in conversation if role == "user"]
    text = " ".join((users[-1] if users else response).split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def item_row(index: int, item: Item, rubric: Rubric, aggregated: Mapping[str, Aggregated],
             score: float | None, *, abstention: Abstention,
             human: Mapping[tuple[str, str], list[Verdict]] | None = None) -> ItemRow:
    """One item as the report and the review app show it (``index``: its number in the run's
    list of finished items; ``human``: the human labels by (item, criterion))."""
    rows = []
    for criterion in rubric.criteria:
        outcome = aggregated[criterion.id]
        final = outcome.verdict
        options = {o.label: o.value for o in criterion.options
                   if not o.na and o.value is not None}
        rows.append(CriterionRow(
            criterion.id, criterion.text, criterion.weight, criterion.axis,
            verdict_label(final) if final is not None else None,
            [Vote(v.verdict.judge, verdict_label(v.verdict), v.verdict.explanation)
             for v in outcome.votes],
            [Vote(h.judge, verdict_label(h), h.explanation)
             for h in (human or {}).get((item.id, criterion.id), [])],
            criterion_value(criterion, final, abstention), options))
    return ItemRow(index, item.id, _conversation(item), item.response or "", score,
                   list(item.tags), rows, _context(item))



def _conversation(item: Item) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in item.messages]  # role: a Literal of strings


def _context(item: Item) -> list[tuple[str, str]]:
    return [(p.id or p.source or f"passage {n}", p.text) for n, p in enumerate(item.context, 1)]
