"""The review app's view of a run: each item read from the run's store when its page is
opened, and a small index of every item, read in the background while the app already serves.

Holding every item whole (conversation, response, every vote and explanation) and computing
the run's agreement figures made the app take 38 s of CPU to start on 1,000 items. Now the app
starts with the list of the run's finished items and their rubric hashes (two queries), so an
item's page (:meth:`RunIndex.item`) is served at once, whatever the run's size; the index that
the item list, its search and filters and the labelling queue read fills in a background thread
(:meth:`RunIndex.build`): each item's id, prompt preview, themes, score, each criterion's final
verdict and whether its judges disagree, and everything the item says (every turn and the
response), lower-cased and compressed, for the search.

Example (see tests/review)::

    index = RunIndex.open("runs/quickstart")
    index.item(0).response            # from the store, at once
    index.build()                     # (the app runs this in a thread)
    [entry.id for entry in index.find(query="bee sting").entries]
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.report.judge_names import short_judge_names
from assay.report.meaning import verdict_label
from assay.report.rows import ItemRow, item_row, preview
from assay.review.queue import disagreement_count, pending
from assay.rubric import Rubric
from assay.runs.results import RunTally, Scoring, final_verdicts, iter_final_verdicts
from assay.runs.store import RunStore

PAGE = 50
FILTERS = ("", "disagreement", "unlabelled")


@dataclass(frozen=True, slots=True)
class CriterionState:
    """One criterion of an item as the queue sees it."""

    id: str
    final: str | None
    judges_disagree: bool


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One item of the run, as the item list and the queue need it."""

    index: int
    """Its number in the review (the run's finished items, in grading order)."""
    id: str
    preview: str
    themes: tuple[str, ...]
    score: float | None
    criteria: tuple[CriterionState, ...]
    text: bytes
    """Everything the item says (id, every turn, the response), lower-cased, compressed."""

    def says(self, phrase: str) -> bool:
        """Whether ``phrase`` (any case) is in the item's id, one of its turns or its response."""
        return phrase.lower() in zlib.decompress(self.text).decode("utf-8")


@dataclass(frozen=True)
class IndexPage:
    """One page of the item list, after the search and filters."""

    entries: list[IndexEntry]
    page: int
    pages: int
    total: int


class StoredRubricMap(Mapping[str, Rubric]):
    """Item id → its rubric, read from the run's store on demand (a few kept, since items often
    share one)."""

    CACHED = 64

    def __init__(self, store: RunStore, hashes: Mapping[str, str]):
        self._store, self._hashes = store, hashes
        self._cache: OrderedDict[str, Rubric] = OrderedDict()

    def __getitem__(self, item_id: str) -> Rubric:
        digest = self._hashes[item_id]
        rubric = self._cache.get(digest)
        if rubric is None:
            rubric = self._cache[digest] = self._store.rubric(digest)
            if len(self._cache) > self.CACHED:
                self._cache.popitem(last=False)
        self._cache.move_to_end(digest)
        return rubric

    def __iter__(self) -> Iterator[str]:
        return iter(self._hashes)

    def __len__(self) -> int:
        return len(self._hashes)


class RunIndex:
    """A run's items for the review app (see the module docstring). Close it when done."""

    def __init__(self, path: Path, store: RunStore):
        self.path, self.name = path, path.name or str(path)
        self._store = store
        config = store.config()
        self.scoring = Scoring.from_config(config)
        self._configured = {j["id"] for j in config.get("judges", []) if isinstance(j, dict)
                            and isinstance(j.get("id"), str)}
        self.ids = store.done_item_ids()
        """The finished items' ids, in grading order: item number ``n`` is ``ids[n]``."""
        self.numbers = {item_id: n for n, item_id in enumerate(self.ids)}
        self._positions = store.item_positions()
        self.rubrics = StoredRubricMap(store, store.rubric_hashes())
        self.entries: list[IndexEntry] = []
        """The index, in item order, as far as :meth:`build` has read."""
        self.judges: list[str] = []
        self.themes: list[str] = []
        self.failure: BaseException | None = None
        self._built = threading.Event()
        self._stop = threading.Event()

    @classmethod
    def open(cls, path: str | Path) -> RunIndex:
        path = Path(path)
        store = RunStore.open(path)
        try:
            return cls(path, store)
        except BaseException:
            store.close()
            raise

    @property
    def ready(self) -> bool:
        """Whether the index holds every item."""
        return self._built.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until :meth:`build` has finished (or ``timeout`` seconds); whether it has."""
        return self._built.wait(timeout)

    def build(self) -> None:
        """Read every finished item into the index, in one pass over the store (its own
        connection: this runs in a thread while the app serves). Errors are kept in
        :attr:`failure`."""
        store = RunStore.open(self.path)
        try:
            tally = RunTally(self.scoring)
            judges: set[str] = set()
            themes: set[str] = set()
            for item, rubric, aggregated in iter_final_verdicts(store, self.scoring):
                number = self.numbers.get(item.id)
                if self._stop.is_set():
                    break
                if number is None:  # finished after the app started: not in this review
                    continue
                score = tally.score(item, rubric, aggregated).scored.item.score
                criteria = []
                for criterion in rubric.criteria:
                    outcome = aggregated[criterion.id]
                    labels = {verdict_label(v.verdict) for v in outcome.votes}
                    judges.update(v.verdict.judge for v in outcome.votes)
                    final = outcome.verdict
                    criteria.append(CriterionState(
                        criterion.id, None if final is None else verdict_label(final),
                        len(labels) > 1))
                conversation: list[tuple[str, str]] = [(m.role, m.content) for m in item.messages]
                text = "\n".join([item.id, *(content for _, content in conversation),
                                  item.response or ""]).lower()
                entry = IndexEntry(
                    number, item.id, preview(conversation, item.response or ""),
                    tuple(t.split(":", 1)[1] for t in item.tags if t.startswith("theme:")),
                    score, tuple(criteria), zlib.compress(text.encode("utf-8"), 1))
                themes.update(entry.themes)
                if len(judges) != len(self.judges):
                    self.judges = sorted(judges)
                if len(themes) != len(self.themes):
                    self.themes = sorted(themes)
                self.entries.append(entry)  # one step: a reader sees the entry whole or not
        except Exception as exc:  # noqa: BLE001 (kept for the app to report: never a half index called whole)
            self.failure = exc
        finally:
            store.close()
            self._built.set()

    def close(self) -> None:
        self._stop.set()
        self._built.wait()
        self._store.close()

    def __len__(self) -> int:
        return len(self.ids)

    def judge_names(self, seen: Iterable[str] = ()) -> dict[str, str]:
        """The short name of each judge of the run (configured, voting, or in ``seen``)."""
        return short_judge_names({*self._configured, *self.judges, *seen})

    def item(self, number: int) -> ItemRow:
        """Item number ``number`` of the review, whole, read from the store and scored."""
        found = self._store.item_at(self._positions[self.ids[number]])
        if found is None:  # the store lost an item it listed: not a run this app can serve
            raise KeyError(self.ids[number])
        item, _ = found
        rubric = self.rubrics[item.id]
        aggregated = final_verdicts(rubric, self._store.votes_of(item.id), self.scoring)
        score = RunTally(self.scoring).score(item, rubric, aggregated).scored.item.score
        return item_row(number, item, rubric, aggregated, score,
                        abstention=self.scoring.abstention)

    def find(self, *, query: str = "", show: str = "", theme: str = "", page: int = 0,
             labelled: set[tuple[str, str]] | None = None,
             others: Mapping[tuple[str, str], set[str]] | None = None) -> IndexPage:
        """The indexed items that say ``query`` (any case, anywhere in the conversation or
        response), of ``theme``, and with ``show`` = ``"disagreement"`` (the judges disagree, or
        another reviewer's label differs from the final verdict) or ``"unlabelled"`` (a
        criterion without this reviewer's label, ``labelled``): page number ``page`` of them."""
        query = query.strip()
        labelled, others = labelled or set(), others or {}
        found: Sequence[IndexEntry] = [
            entry for entry in list(self.entries)
            if (not theme or theme in entry.themes)
            and (show != "disagreement" or disagreement_count(entry, others))
            and (show != "unlabelled" or pending(entry, labelled))
            and (not query or entry.says(query))]
        pages = max(1, -(-len(found) // PAGE))
        page = min(max(page, 0), pages - 1)
        return IndexPage(list(found[page * PAGE:(page + 1) * PAGE]), page, pages, len(found))
