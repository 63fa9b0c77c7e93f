"""Score many items at once: group verdicts by item, score each with the one item scorer
(:class:`~assay.scoring.ItemScorer`), summarise.

This is what ``assay score`` and the rescoring of stored runs do: verdicts in, one
:class:`ItemScore` per item out, plus a summary — the mean with a seeded bootstrap 95% CI for
every formula, and the official HealthBench report (clipped mean, bootstrap std, axes, themes)
for ``formula="healthbench"``.

Example:
    >>> from assay.rubric import Rubric
    >>> from assay.verdict import Verdict
    >>> rubric = Rubric(criteria=[{"id": "a", "text": "States the dose.", "weight": 2},
    ...                           {"id": "b", "text": "Advises a doctor.", "weight": 2}])
    >>> verdicts = [Verdict(item_id="q1", criterion_id="a", decision="MET"),
    ...             Verdict(item_id="q1", criterion_id="b", decision="UNMET"),
    ...             Verdict(item_id="q2", criterion_id="a", decision="MET"),
    ...             Verdict(item_id="q2", criterion_id="b", decision="MET")]
    >>> table = score_items(verdicts, rubric)
    >>> [(s.item_id, s.score) for s in table.items], table.mean
    ([('q1', 0.5), ('q2', 1.0)], 0.75)
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from assay.errors import InputError, Issue
from assay.rubric.criterion import Criterion
from assay.rubric.rubric import Rubric
from assay.scoring.bootstrap import mean_with_ci
from assay.scoring.formulas import (
    Abstention,
    Formula,
    LengthPenalty,
    RewardNormalization,
    ScoreResult,
)
from assay.scoring.healthbench import (
    HealthBenchExampleScore,
    HealthBenchReport,
    HealthBenchValues,
)
from assay.scoring.item import ItemScorer, group_by_item
from assay.scoring.rubrics import ItemRubrics
from assay.verdict import Verdict


@dataclass(frozen=True, slots=True)
class ItemScore:
    """One item's score. ``n_ungraded``: its criteria left without a verdict (a failed or
    skipped judge call); an item with any is unscored, never scored without them."""

    item_id: str
    score: float | None
    raw: float
    n_scored: int
    n_abstained: int
    n_ungraded: int = 0


class ItemScores(Sequence[ItemScore]):
    """Per-item scores kept in compact columns and read back as :class:`ItemScore` values.

    A run of 100,000 items holds about 8 MB here instead of 25 MB of objects, so the memory
    of scoring a run stays nearly flat in its size.

    >>> scores = ItemScores()
    >>> scores.append(ItemScore("q1", 0.5, 0.5, 2, 0))
    >>> scores.append(ItemScore("q2", None, 0.0, 0, 2))
    >>> list(scores) == [ItemScore("q1", 0.5, 0.5, 2, 0), ItemScore("q2", None, 0.0, 0, 2)]
    True
    """

    __slots__ = ("_counts", "_ids", "_raws", "_scores")

    def __init__(self, scores: Iterable[ItemScore] = ()) -> None:
        self._ids: list[str] = []
        self._scores = array("d")  # NaN: no score
        self._raws = array("d")
        self._counts = array("q")  # n_scored, n_abstained, n_ungraded, interleaved
        for score in scores:
            self.append(score)

    def append(self, score: ItemScore) -> None:
        self._ids.append(score.item_id)
        self._scores.append(math.nan if score.score is None else score.score)
        self._raws.append(score.raw)
        self._counts.extend((score.n_scored, score.n_abstained, score.n_ungraded))

    def extend(self, later: ItemScores) -> None:
        """Append every score of ``later``, in its order."""
        self._ids.extend(later._ids)
        self._scores.extend(later._scores)
        self._raws.extend(later._raws)
        self._counts.extend(later._counts)

    def __len__(self) -> int:
        return len(self._ids)

    def _at(self, k: int) -> ItemScore:
        score = self._scores[k]
        return ItemScore(self._ids[k], None if math.isnan(score) else score, self._raws[k],
                         *self._counts[3 * k:3 * k + 3])

    @overload
    def __getitem__(self, k: int) -> ItemScore: ...
    @overload
    def __getitem__(self, k: slice) -> list[ItemScore]: ...
    def __getitem__(self, k: int | slice) -> ItemScore | list[ItemScore]:
        if isinstance(k, slice):
            return [self._at(i) for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self._at(k)

    def __iter__(self) -> Iterator[ItemScore]:
        return (self._at(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"ItemScores({len(self)} items)"

    def score_values(self) -> list[float]:
        """The scores that are defined, in order."""
        return [s for s in self._scores if not math.isnan(s)]

    def n_ungraded(self) -> int:
        """How many items are unscored because a criterion has no verdict."""
        return sum(1 for k in range(len(self)) if self._counts[3 * k + 2])


@dataclass(frozen=True, slots=True)
class ScoredItem:
    """One item scored by :meth:`ScoreTableBuilder.score`, not yet in a table: its table
    row, the item scorer's result, and its HealthBench example metrics for that formula."""

    item: ItemScore
    result: ScoreResult
    healthbench: HealthBenchExampleScore | None = None


@dataclass(frozen=True, slots=True)
class ScoreTable:
    """Per-item scores and their summary. ``n_unscored`` counts every item without a score;
    ``n_ungraded``, those of them unscored because a criterion has no verdict (a failed or
    skipped judge call: fail closed), which no mean, CI or HealthBench figure includes."""

    formula: str
    items: Sequence[ItemScore]
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_unscored: int
    healthbench: HealthBenchReport | None = None
    n_ungraded: int = 0

    def ungraded_ids(self) -> list[str]:
        """The items left unscored because a criterion has no verdict, in order."""
        return [s.item_id for s in self.items if s.n_ungraded]

    def to_dict(self) -> dict[str, Any]:
        summary: dict[str, Any] = {
            "formula": self.formula,
            "mean": self.mean,
            "ci95": [self.ci_low, self.ci_high],
            "n_items": len(self.items),
            "n_unscored": self.n_unscored,
            "n_ungraded": self.n_ungraded,
        }
        if self.healthbench is not None:
            summary["healthbench"] = {
                "overall": self.healthbench.overall,
                "bootstrap_std": self.healthbench.bootstrap_std,
                "n": self.healthbench.n,
                "metrics": self.healthbench.metrics,
            }
        return {
            "summary": summary,
            "items": [
                {"item_id": s.item_id, "score": s.score, "raw": s.raw,
                 "n_scored": s.n_scored, "n_abstained": s.n_abstained,
                 "n_ungraded": s.n_ungraded}
                for s in self.items
            ],
        }


class ScoreTableBuilder:
    """Score items one at a time and build the :class:`ScoreTable` at the end.

    Used by :func:`score_items` and by the run store, which streams items instead of holding
    every verdict in memory.
    """

    def __init__(
        self,
        formula: Formula = "autorubric",
        abstention: Abstention = Abstention(),
        *,
        length_penalty: LengthPenalty | None = None,
        reward_normalization: RewardNormalization = "minmax",
        seed: int = 0,
        n_bootstrap: int = 1000,
    ) -> None:
        self.scorer = ItemScorer(formula, abstention, length_penalty, reward_normalization)
        self.formula = formula
        self.seed = seed
        self.n_bootstrap = n_bootstrap
        self.items = ItemScores()
        self._healthbench = HealthBenchValues()  # aggregated as they come, not kept per example

    def add(
        self,
        item_id: str,
        criteria: Sequence[Criterion],
        verdicts: Mapping[str, Verdict],
        *,
        response: str | None = None,
        example_tags: Iterable[str] = (),
        ungraded: Collection[str] = (),
    ) -> ScoreResult:
        """Score one item and keep it; returns the item scorer's result."""
        scored = self.score(item_id, criteria, verdicts, response=response,
                            example_tags=example_tags, ungraded=ungraded)
        self.keep(scored)
        return scored.result

    def score(
        self,
        item_id: str,
        criteria: Sequence[Criterion],
        verdicts: Mapping[str, Verdict],
        *,
        response: str | None = None,
        example_tags: Iterable[str] = (),
        ungraded: Collection[str] = (),
    ) -> ScoredItem:
        """Score one item without keeping it (:meth:`keep` adds it to the table later, so
        items scored out of order can be kept in order). ``ungraded``: criteria not graded
        although ``verdicts`` may hold one (an ensemble judge that did not answer); with any,
        or a criterion missing from ``verdicts``, the item is unscored (:meth:`ItemScorer.score`).

        >>> from assay.rubric import Rubric
        >>> rubric = Rubric(criteria=[{"id": "a", "text": "States the dose."},
        ...                           {"id": "b", "text": "Suggests aspirin.", "weight": -5}])
        >>> met = {"a": Verdict(item_id="q", criterion_id="a", decision="MET")}
        >>> ScoreTableBuilder().score("q", rubric.criteria, met).item
        ItemScore(item_id='q', score=None, raw=0.0, n_scored=1, n_abstained=0, n_ungraded=1)
        """
        result = self.scorer.score(criteria, verdicts, response=response, ungraded=ungraded)
        example = (self.scorer.healthbench(item_id, criteria, verdicts, example_tags)
                   if self.formula == "healthbench" and result.score is not None else None)
        return ScoredItem(ItemScore(item_id, result.score, result.raw, result.n_scored,
                                    result.n_abstained, result.n_ungraded), result, example)

    def keep(self, scored: ScoredItem) -> None:
        """Add an item scored by :meth:`score` as the table's next item."""
        self.items.append(scored.item)
        if scored.healthbench is not None:
            self._healthbench.add(scored.healthbench)

    def extend(self, later: ScoreTableBuilder) -> None:
        """Add every item of ``later`` after this builder's own, as if each had been added
        here in turn (the same columns in the same order, so the same bootstrap draws).

        >>> from assay.rubric import Rubric
        >>> rubric = Rubric(criteria=[{"id": "a", "text": "States the dose."}])
        >>> met = {"a": Verdict(item_id="q", criterion_id="a", decision="MET")}
        >>> whole, first, second = (ScoreTableBuilder("healthbench") for _ in range(3))
        >>> for builder, item_id in ((whole, "q1"), (whole, "q2"), (first, "q1"), (second, "q2")):
        ...     _ = builder.add(item_id, rubric.criteria, met)
        >>> first.extend(second)
        >>> first.build() == whole.build()
        True
        """
        self.items.extend(later.items)
        self._healthbench.extend(later._healthbench)

    def build(self) -> ScoreTable:
        scored = self.items.score_values()
        mean, low, high = mean_with_ci(scored, seed=self.seed, n_bootstrap=self.n_bootstrap)
        report = (self._healthbench.report(seed=self.seed, n_bootstrap=self.n_bootstrap)
                  if self._healthbench else None)
        return ScoreTable(self.formula, self.items, mean, low, high,
                          len(self.items) - len(scored), report, self.items.n_ungraded())


def score_items(
    verdicts: Iterable[Verdict],
    rubrics: ItemRubrics | Rubric,
    *,
    formula: Formula = "autorubric",
    abstention: Abstention = Abstention(),
    length_penalty: LengthPenalty | None = None,
    responses: Mapping[str, str] | None = None,
    reward_normalization: RewardNormalization = "minmax",
    example_tags: Mapping[str, list[str]] | None = None,
    seed: int = 0,
    n_bootstrap: int = 1000,
) -> ScoreTable:
    """Score every item that has verdicts against its rubric in ``rubrics`` (or against one
    rubric for all); an item without a rubric, or with verdicts on criteria its rubric lacks, is
    an error (all such items reported together). An item without a verdict on one of its
    criteria is unscored (``n_ungraded``): a missing verdict is not an abstention (a judge's
    CANNOT_ASSESS is). ``responses`` (item id → response text) feed
    the length penalty; ``example_tags`` feed HealthBench's theme breakdown."""
    builder = ScoreTableBuilder(formula, abstention, length_penalty=length_penalty,
                                reward_normalization=reward_normalization, seed=seed,
                                n_bootstrap=n_bootstrap)
    lookup = ItemRubrics.of(rubrics)
    issues: list[Issue] = []
    for item_id, by_criterion in group_by_item(verdicts).items():
        rubric = lookup.rubric(item_id)
        if rubric is None:
            issues.append(Issue(None, None, f"item[{item_id}]", "no rubric for this item"))
            continue
        unknown = set(by_criterion) - {c.id for c in rubric.criteria}
        if unknown:
            issues.append(Issue(None, None, f"item[{item_id}]",
                                f"verdicts for criteria not in rubric {rubric.id!r}: "
                                f"{', '.join(sorted(unknown))}"))
            continue
        builder.add(item_id, rubric.criteria, by_criterion,
                    response=(responses or {}).get(item_id),
                    example_tags=(example_tags or {}).get(item_id, ()))
    if issues:
        raise InputError(issues)
    return builder.build()
