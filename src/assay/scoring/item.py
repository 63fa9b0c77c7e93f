"""The one item scorer: every score of one answer in Assay comes from :class:`ItemScorer`.

``assay score``, a run's scoring and rescoring (:mod:`assay.runs.results`), the metrics'
per-item scores (:func:`assay.metrics.scores.item_scores`) and the RL reward scorer
(:mod:`assay.rewards.scorer`) all hold an :class:`ItemScorer` — the formula, the abstention
strategy, the length penalty and the reward normalisation — and call :meth:`ItemScorer.score`
on one item's criteria and its verdicts keyed by criterion id.

Verdicts that arrive as a flat list are keyed by :func:`group_by_item`, the one rule for
duplicates: an item's criterion scores from exactly one verdict, so two verdicts on one
(item, criterion) are refused with an error naming them, never silently "the last one wins"
(a judge that gave two is a doubled or broken export; two judges need choosing or aggregating).

Example:
    >>> from assay.rubric import Criterion
    >>> from assay.verdict import Verdict
    >>> criteria = [Criterion(id="a", text="States the dose.", weight=3, axis="accuracy"),
    ...             Criterion(id="b", text="Advises seeing a doctor.", weight=1,
    ...                       axis="completeness")]
    >>> grouped = group_by_item([Verdict(item_id="q", criterion_id="a", decision="MET"),
    ...                          Verdict(item_id="q", criterion_id="b", decision="CANNOT_ASSESS")])
    >>> ItemScorer().score(criteria, grouped["q"]).score        # b abstains: skipped
    1.0
    >>> ItemScorer(abstention=Abstention.parse("zero")).score(criteria, grouped["q"]).score
    0.75
    >>> ItemScorer().axis_scores(criteria, grouped["q"])
    {'accuracy': 1.0}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from assay.errors import InputError, Issue
from assay.rubric.criterion import Criterion
from assay.scoring.formulas import (
    Abstention,
    Formula,
    LengthPenalty,
    RewardNormalization,
    ScoreResult,
    score_rubric,
)
from assay.scoring.healthbench import HealthBenchExampleScore, healthbench_example
from assay.verdict import Verdict


@dataclass(frozen=True, slots=True)
class ItemScorer:
    """How one answer's verdicts become its score; see :mod:`assay.scoring.formulas`."""

    formula: Formula = "autorubric"
    abstention: Abstention = field(default_factory=Abstention)
    length_penalty: LengthPenalty | None = None
    reward_normalization: RewardNormalization = "minmax"

    def score(self, criteria: Sequence[Criterion], verdicts: Mapping[str, Verdict], *,
              response: str | None = None, ungraded: Collection[str] = ()) -> ScoreResult:
        """The item's score. ``response`` feeds the length penalty.

        A criterion without a verdict in ``verdicts`` (or named in ``ungraded``: e.g. one an
        ensemble's judge did not answer) was not graded: a failed or skipped judge call. The
        item is then unscored (score None, raw 0, ``n_ungraded`` counting them), never scored
        as if the criterion abstained or were unmet; a judge's CANNOT_ASSESS is an abstention.

        >>> from assay.rubric import Criterion
        >>> criteria = [Criterion(id="a", text="States the dose."),
        ...             Criterion(id="p", text="Suggests aspirin.", weight=-5)]
        >>> met = {"a": Verdict(item_id="q", criterion_id="a", decision="MET")}
        >>> result = ItemScorer().score(criteria, met)
        >>> result.score, result.n_ungraded
        (None, 1)
        """
        result = score_rubric(criteria, verdicts, formula=self.formula,
                              abstention=self.abstention, length_penalty=self.length_penalty,
                              response=response, reward_normalization=self.reward_normalization)
        missing = {c.id for c in criteria if c.id not in verdicts or c.id in ungraded}
        if not missing:
            return result
        without = sum(1 for c in criteria if c.id not in verdicts)  # counted as abstained
        return replace(result, score=None, raw=0.0, positive_total=0.0, penalty_total=0.0,
                       n_abstained=result.n_abstained - without,
                       n_scored=result.n_scored - (len(missing) - without),
                       n_ungraded=len(missing))

    def axis_scores(self, criteria: Sequence[Criterion],
                    verdicts: Mapping[str, Verdict]) -> dict[str, float]:
        """Each axis's criteria scored alone (no length penalty), for the axes that have
        positive criteria and a defined score, in the rubric's order."""
        axes: dict[str, list[Criterion]] = {}
        for criterion in criteria:
            if criterion.axis:
                axes.setdefault(criterion.axis, []).append(criterion)
        scores = {}
        for axis, subset in axes.items():
            if not any(c.weight > 0 for c in subset):
                continue
            score = score_rubric(subset, verdicts, formula=self.formula,
                                 abstention=self.abstention,
                                 reward_normalization=self.reward_normalization).score
            if score is not None:
                scores[axis] = score
        return scores

    def healthbench(self, item_id: str, criteria: Sequence[Criterion],
                    verdicts: Mapping[str, Verdict],
                    example_tags: Iterable[str] = ()) -> HealthBenchExampleScore:
        """The item's HealthBench example metrics (overall, example tags, rubric tags)."""
        return healthbench_example(criteria, verdicts, example_tags, abstention=self.abstention,
                                   example_id=item_id)


def group_by_item(verdicts: Iterable[Verdict]) -> dict[str, dict[str, Verdict]]:
    """``{item_id: {criterion_id: verdict}}``, refusing two verdicts on one criterion of one
    item (one issue per such criterion, naming the judges that gave them)."""
    grouped: dict[str, dict[str, Verdict]] = {}
    repeated: dict[tuple[str, str], list[str]] = {}
    for verdict in verdicts:
        per_item = grouped.setdefault(verdict.item_id, {})
        first = per_item.get(verdict.criterion_id)
        if first is None:
            per_item[verdict.criterion_id] = verdict
        else:
            key = (verdict.item_id, verdict.criterion_id)
            repeated.setdefault(key, [first.judge]).append(verdict.judge)
    if repeated:
        raise InputError([Issue(None, None, f"verdict[{item_id}/{criterion_id}]",
                                _repeated_message(judges))
                          for (item_id, criterion_id), judges in repeated.items()])
    return grouped


def _repeated_message(judges: list[str]) -> str:
    counts = Counter(judges)
    twice = [f"{judge!r} ×{n}" for judge, n in counts.items() if n > 1]
    if twice:
        return (f"more than one verdict for this criterion from one judge ({', '.join(twice)}): "
                "a repeated line or a doubled export; keep one")
    return (f"more than one verdict for this criterion (judges {', '.join(map(repr, counts))}): "
            "choose one judge or aggregate the ensemble's votes first")
