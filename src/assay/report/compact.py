"""What a report keeps of a run's verdicts and rubrics while it streams the run's items.

A report of the whole HealthBench benchmark reads 5,000 items a run, about 70,000 verdicts and
5,000 rubrics of several kilobytes. Held as pydantic objects they took over 100 KiB an item;
the report's figures need far less. :class:`CompactVerdicts` keeps each verdict as a tuple of
shared strings and makes :class:`~assay.verdict.Verdict` objects again only when a statistic
asks; :class:`StoredRubrics` keeps each item's rubric hash and reads the rubric back from the
run's store when it is needed (the store is the run's record: nothing is held twice).

>>> from assay.verdict import Verdict
>>> kept = CompactVerdicts()
>>> kept.add(Verdict(item_id="q1", criterion_id="c1", judge="j", verdict="MET",
...                  explanation="dropped: the report's figures never read it"))
>>> [(v.item_id, v.decision, v.explanation) for v in kept.of_item("q1")]
[('q1', <Decision.MET: 'MET'>, '')]
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path

from assay.rubric import Rubric
from assay.verdict import Decision, Verdict

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

    def of_item(self, item_id: str) -> list[Verdict]:
        """The item's verdicts, in the order they were added."""
        return [_verdict(item_id, row) for row in self._by_item.get(item_id, ())]

    def of_items(self, item_ids: Iterable[str]) -> Iterator[Verdict]:
        for item_id in item_ids:
            yield from self.of_item(item_id)

    def __iter__(self) -> Iterator[Verdict]:
        return self.of_items(list(self._by_item))


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
