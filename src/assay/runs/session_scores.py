"""A run's own summary, scored from the items this session graded as they finish.

The engine hands each item it registered and finished in this session to
:meth:`SessionScores.add` with its rubric and votes, still in memory: the item is scored at
once and only its small part of the scores is held (:class:`~assay.runs.results.ItemTally`)
until the items registered before it are kept, so the table has the store's item order (the
HealthBench bootstrap draws depend on it) while memory stays flat. At the end
(:meth:`SessionScores.scores`) only the items registered in earlier sessions of a resumed run
are read back from the store, and put before this session's.

The result is the one :func:`~assay.runs.results.score_run` gives for the store (what
``assay score RUN`` and :func:`~assay.runs.results.rescore_run` read): this session's
finished items are checked against the store's, and anything unexpected (an item id given
twice, an item the scorer could not score) falls back to reading the whole run from the store.

Example (what :mod:`assay.runs.runner` does)::

    session = SessionScores(Scoring.from_config(config), after=store.last_position())
    outcome = await Engine(store, grader, slots, on_item_done=session.add).run(items)
    scores = session.scores(store)
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.item import Item
from assay.logs import get_logger
from assay.rubric import Rubric
from assay.runs.results import (
    ItemTally,
    RunScores,
    RunTally,
    Scoring,
    final_verdicts,
    iter_final_verdicts,
    score_run,
)
from assay.runs.store import RunStore
from assay.verdict import Verdict

log = get_logger("assay.runs")


def _store_order(vote: Verdict) -> tuple[str, str]:
    return vote.criterion_id, vote.judge  # the store's ORDER BY (SQLite compares UTF-8 bytes)


class SessionScores:
    """The scores of a run, gathered from the items this session finishes.

    ``after`` is the store's last item position before this session (-1 for a new run): the
    items registered now come after it, in the order the engine registers them.
    """

    def __init__(self, scoring: Scoring, *, after: int) -> None:
        self.scoring = scoring
        self.after = after
        # A resumed run's earlier items go first: its agreements are kept to sum after theirs.
        self._tally = RunTally(scoring, keep_agreements=after >= 0)
        self._kept_ids: list[str] = []
        self._waiting: dict[int, ItemTally] = {}  # finished before an item registered earlier
        self._next = 0  # the position (among this session's items) to keep next
        self._failed = False

    def add(self, position: int, item: Item, rubric: Rubric, votes: Sequence[Verdict]) -> None:
        """An item this session registered at ``position`` (0, 1, ...) has finished, with the
        votes of every call it made."""
        if self._failed:
            return
        try:
            finals = final_verdicts(rubric, sorted(votes, key=_store_order), self.scoring)
            self._waiting[position] = self._tally.score(item, rubric, finals)
            while self._next in self._waiting:
                self._keep(self._waiting.pop(self._next))
                self._next += 1
        except Exception:  # the summary then reads the store, and says what is wrong there
            log.debug("scoring item %s as it finished failed", item.id, exc_info=True)
            self._failed = True
            self._waiting.clear()

    def _keep(self, item: ItemTally) -> None:
        self._tally.keep(item)
        self._kept_ids.append(item.scored.item.item_id)

    def scores(self, store: RunStore) -> RunScores:
        """The run's scores: those of this session's items and, for a resumed run, of the
        items finished in its earlier sessions, read from ``store``."""
        for position in sorted(self._waiting):  # items after one that did not finish
            self._keep(self._waiting.pop(position))
        if self._failed or store.done_item_ids(after=self.after) != self._kept_ids:
            return score_run(store, self.scoring)
        if self.after < 0:
            return self._tally.scores()
        earlier = RunTally(self.scoring)
        for item, rubric, finals in iter_final_verdicts(store, self.scoring, up_to=self.after):
            earlier.keep(earlier.score(item, rubric, finals))
        earlier.extend(self._tally)
        return earlier.scores()
