"""What a report keeps of a run's verdicts and rubrics while it streams the run's items.

A report of the whole HealthBench benchmark reads 5,000 items a run, about 70,000 verdicts and
5,000 rubrics of several kilobytes. Held as pydantic objects they took over 100 KiB an item;
the report's figures need far less. :class:`CompactVerdicts` keeps each verdict as a tuple of
shared strings and makes :class:`~assay.verdict.Verdict` objects again only when a statistic
asks; :class:`StoredRubrics` keeps each item's rubric hash and reads the rubric back from the
run's store when it is needed (the store is the run's record: nothing is held twice);
:class:`JudgeVotes` keeps what the agreement between judges reads of every judge's votes.

>>> from assay.verdict import Verdict
>>> kept = CompactVerdicts()
>>> kept.add(Verdict(item_id="q1", criterion_id="c1", judge="j", verdict="MET",
...                  explanation="dropped: the report's figures never read it"))
>>> [(v.item_id, v.decision, v.explanation) for v in kept.of_item("q1")]
[('q1', <Decision.MET: 'MET'>, '')]
"""

from __future__ import annotations

import sys
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.metrics.labels import CriterionInfo
from assay.rubric import Criterion, Rubric
from assay.verdict import Decision, Verdict

if TYPE_CHECKING:
    from assay.metrics.inter_judge import InterJudgeReliability

_Row = tuple[str, str, Decision | None, str | None]  # criterion, judge, decision, option


class CompactVerdicts:
    """Verdicts grouped by item as small tuples, without their explanations."""

    def __init__(self) -> None:
        self._by_item: dict[str, list[_Row]] = {}

    def add(self, verdict: Verdict) -> None:
        option = sys.intern(verdict.option) if verdict.option is not None else None
        row = (sys.intern(verdict.criterion_id), sys.intern(verdict.judge), verdict.decision,
               option)
        self._by_item.setdefault(sys.intern(verdict.item_id), []).append(row)

    def add_all(self, verdicts: Iterable[Verdict]) -> None:
        for verdict in verdicts:
            self.add(verdict)

    def of_item(self, item_id: str) -> list[Verdict]:
        """The item's verdicts, in the order they were added."""
        return [_verdict(item_id, row) for row in self._by_item.get(item_id, ())]

    def of_items(self, item_ids: Iterable[str]) -> Iterator[Verdict]:
        for item_id in item_ids:
            yield from self.of_item(item_id)

    def __iter__(self) -> Iterator[Verdict]:
        return self.of_items(list(self._by_item))

    def judges(self) -> list[str]:
        """Every judge that gave one of these verdicts, sorted."""
        return sorted({row[1] for rows in self._by_item.values() for row in rows})

    def units(self) -> Counter[str]:
        """How many items each criterion has a verdict on."""
        return Counter(criterion for rows in self._by_item.values()
                       for criterion in {row[0] for row in rows})


def _verdict(item_id: str, row: _Row) -> Verdict:
    criterion, judge, decision, option = row
    # Every row was a validated Verdict when it was added: no need to validate it again.
    return Verdict.model_construct(item_id=item_id, criterion_id=criterion, judge=judge,
                                   decision=decision, option=option)


class StoredRubrics:
    """Each item's rubric, read back from the run's store on demand (a few are cached, since
    items often share one rubric)."""

    CACHED = 64

    def __init__(self, run: Path, hashes: dict[str, str]):
        self.run = run
        self._hashes = hashes
        """item id → rubric hash in the store"""

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._hashes

    def item_ids(self) -> set[str]:
        return set(self._hashes)

    def each(self, item_ids: Iterable[str]) -> Iterator[tuple[str, Rubric]]:
        """``(item id, rubric)`` for each of ``item_ids`` (all of them must be the run's)."""
        from assay.metrics.sources import open_run

        store = open_run(self.run)
        cache: OrderedDict[str, Rubric] = OrderedDict()
        try:
            for item_id in item_ids:
                digest = self._hashes[item_id]
                rubric = cache.get(digest)
                if rubric is None:
                    rubric = cache[digest] = store.rubric(digest)
                    if len(cache) > self.CACHED:
                        cache.popitem(last=False)
                else:
                    cache.move_to_end(digest)
                yield item_id, rubric
        finally:
            store.close()

    def as_dict(self) -> dict[str, Rubric]:
        """Every item's rubric (one object per distinct rubric)."""
        return dict(self.each(list(self._hashes)))



class JudgeVotes:
    """Every judge's votes as the store streams past, kept as what the agreement between
    judges reads (:func:`assay.metrics.inter_judge.inter_judge`): the votes as small tuples,
    each (item, criterion)'s :class:`~assay.metrics.labels.CriterionInfo`, and each judge's
    score of each item (the one item scorer, as :func:`assay.metrics.summary.reliability_summary`
    scores them). Neither the rubrics nor the votes' explanations are kept.

    >>> from assay.rubric import Criterion
    >>> rubric = Rubric(id="r", criteria=[Criterion(id="a", text="Says A.", weight=2),
    ...                                   Criterion(id="b", text="Says B.", weight=2)])
    >>> votes = JudgeVotes()
    >>> for item, answers in {"q1": "MM", "q2": "MU", "q3": "UU"}.items():
    ...     votes.add(item, rubric.criteria, [
    ...         Verdict(item_id=item, criterion_id=c, judge=j, verdict=v)
    ...         for c, x in zip("ab", answers) for j, v in (("j1", "MET"), ("j2", "MET" if x == "M" else "UNMET"))])
    >>> votes.judges(), votes.scores["j2"]
    (['j1', 'j2'], {'q1': 1.0, 'q2': 0.5, 'q3': 0.0})
    >>> votes.reliability(n_resamples=0).percent_agreement.value
    0.5
    """

    def __init__(self, *, formula: str = "autorubric", abstention: Any = None,
                 score_items: bool = True) -> None:
        # score_items=False: no judge's item scores (the score ICC of :meth:`reliability`),
        # for a caller that will not ask for them
        self.votes = CompactVerdicts()
        self.infos: dict[tuple[str, str], CriterionInfo] = {}
        self.scores: dict[str, dict[str, float | None]] = {}
        self._formula, self._abstention, self._score_items = formula, abstention, score_items

    def add(self, item_id: str, criteria: Sequence[Criterion], votes: Sequence[Verdict]) -> None:
        """One item's criteria and every judge's votes on it."""
        from assay.metrics.scores import item_scores

        item_id = sys.intern(item_id)
        for criterion in criteria:
            self.infos[(item_id, sys.intern(criterion.id))] = (
                CriterionInfo.from_criterion(criterion) if criterion.is_multi_choice
                else CriterionInfo.binary(criterion.id, criterion.axis))
        by_judge: dict[str, list[Verdict]] = {}
        # in the store's order (criterion id, then judge): the figures' sums in the same order
        for vote in sorted(votes, key=lambda v: (v.criterion_id, v.judge)):
            self.votes.add(vote)
            by_judge.setdefault(vote.judge, []).append(vote)
        if not self._score_items:
            return
        for judge, mine in by_judge.items():
            scored = item_scores({item_id: criteria}, mine, formula=self._formula,
                                 abstention=self._abstention)
            if item_id in scored:
                self.scores.setdefault(judge, {})[item_id] = scored[item_id]

    def judges(self) -> list[str]:
        return self.votes.judges()

    def reliability(self, *, seed: int = 0, n_resamples: int = 1000,
                    min_units: int = 1) -> InterJudgeReliability:
        """The reliability between the judges, their votes streamed from the tuples
        (``min_units``: see :func:`~assay.metrics.inter_judge.inter_judge`)."""
        from assay.metrics.inter_judge import inter_judge

        return inter_judge(iter(self.votes), self.infos, item_scores=self.scores, seed=seed,
                           n_resamples=n_resamples, min_units=min_units)
