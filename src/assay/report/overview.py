"""The report's per-run tables, summed item by item as the items stream past.

:class:`RunOverview` holds counts, never the items: how many items and disagreements there
are, each criterion's failures, points lost, abstentions and errors, a taxonomy run's active
leaves, and the text of each criterion id (the agreement tables name criteria by their text).

>>> from assay.report.rows import CriterionRow, ItemRow
>>> value = {"UNMET": 0.0, "MET": 1.0}
>>> rows = lambda final: [CriterionRow("c", "Says C.", 2.0, None, final, value=value.get(final))]
>>> overview = RunOverview()
>>> for i, final in enumerate(["UNMET", "MET", "CANNOT_ASSESS", None]):
...     overview.add(ItemRow(i, f"q{i}", [], "", None, [], rows(final)))
>>> (o := overview.most_failed()[0]).failed, o.graded, o.abstained, o.errors, o.points_lost
(1, 2, 1, 1, 2.0)
>>> overview.items, overview.disagreements
(4, 0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.report.rows import CriterionRow, ItemRow


@dataclass(slots=True)
class CriterionOutcomes:
    """How one criterion fared across a run's items (grouped by id and text)."""

    id: str
    text: str
    points: float
    graded: int = 0
    failed: int = 0
    """Missed (a positive criterion unmet) or harmful (a penalty met)."""
    abstained: int = 0
    errors: int = 0
    """No verdict: every call for it failed."""
    points_lost: float = 0.0
    """Points it cost the answers, summed over the items (see :attr:`CriterionRow.points_lost`)."""

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.graded if self.graded else None


@dataclass(slots=True)
class ActiveLeaf:
    """How often a taxonomy leaf was routed to, and how the answers fared on it."""

    id: str
    text: str
    axis: str | None
    active: int = 0
    met: int = 0


@dataclass
class RunOverview:
    """A run's item counts and per-criterion tables (see the module docstring); ``shown``:
    how many items the page lists (``--max-items``), whose disagreements are counted."""

    shown: int | None = None
    leaves: bool = False
    """Whether to count a taxonomy run's active leaves (:meth:`active_leaves`)."""
    items: int = 0
    disagreements: int = 0
    """Criteria where the judges disagree or a human label differs, in the listed items."""
    criterion_texts: dict[str, str] = field(default_factory=dict)
    """Each criterion's text by its id (the first text seen for an id)."""
    _outcomes: dict[tuple[str, str], CriterionOutcomes] = field(default_factory=dict)
    _leaves: dict[str, ActiveLeaf] = field(default_factory=dict)

    def add(self, item: ItemRow) -> None:
        listed = self.shown is None or self.items < self.shown
        self.items += 1
        for row in item.criteria:
            if listed:
                self.disagreements += row.judges_disagree or row.human_disagrees
            self.criterion_texts.setdefault(row.id, row.text)
            self._count_outcome(row)
            if self.leaves:
                leaf = self._leaves.get(row.id)
                if leaf is None:
                    leaf = self._leaves[row.id] = ActiveLeaf(row.id, row.text, row.axis)
                leaf.active += 1
                leaf.met += row.final == "MET"

    def _count_outcome(self, row: CriterionRow) -> None:
        key = (row.id, row.text)
        outcome = self._outcomes.get(key)
        if outcome is None:
            outcome = self._outcomes[key] = CriterionOutcomes(row.id, row.text, row.weight)
        outcome.points_lost += row.points_lost
        what = row.meaning
        if what == "failed":
            outcome.errors += 1
        elif what == "abstained":
            outcome.abstained += 1
        else:
            outcome.graded += 1
            outcome.failed += what in ("missed", "harmful")

    @property
    def listed(self) -> int:
        """The items the page lists."""
        return self.items if self.shown is None else min(self.items, self.shown)

    def most_failed(self) -> list[CriterionOutcomes]:
        """Every criterion's failures, abstentions and errors, those that cost the answers the
        most points first (then the most often failed)."""
        return sorted(self._outcomes.values(),
                      key=lambda o: (-o.points_lost, -o.failed, -(o.failure_rate or 0.0), o.id))

    def active_leaves(self) -> list[ActiveLeaf]:
        """A taxonomy run's leaves by how many items the router activated them for (an item's
        rubric is its active leaves), with how many of those answers met them."""
        return sorted(self._leaves.values(), key=lambda leaf: (-leaf.active, leaf.id))

