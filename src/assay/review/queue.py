"""The reviewer's queue: which item to open next.

An item is *pending* for a reviewer while one of its criteria has no label of theirs. The
queue lists pending items in input order, or with ``disagreements`` first: items where the
judges disagree, or where another reviewer's label differs from the final verdict, ahead of the
rest (the most such criteria first), then in input order.

Example:
    >>> from assay.report.rows import CriterionRow, ItemRow, Vote
    >>> def item(index, labels):
    ...     rows = [CriterionRow("c", "C.", 1.0, None, "MET", [Vote("j1", l, "") for l in labels])]
    ...     return ItemRow(index, f"q{index}", [], "", None, [], rows)
    >>> items = [item(0, ["MET"]), item(1, ["MET", "UNMET"]), item(2, ["MET"])]
    >>> [i.index for i in queue(items, labelled=set(), others={}, order="disagreements")]
    [1, 0, 2]
    >>> next_index(items, after=1, labelled={("q0", "c")}, others={}, order="input")
    2
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

ORDERS = ("input", "disagreements")


class QueuedCriterion(Protocol):
    """What the queue reads of a criterion (a report's ``CriterionRow``, the review index's
    ``CriterionState``)."""

    @property
    def id(self) -> str: ...
    @property
    def final(self) -> str | None: ...
    @property
    def judges_disagree(self) -> bool: ...


class QueuedItem(Protocol):
    """What the queue reads of an item (a report's ``ItemRow``, an ``IndexEntry``)."""

    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def criteria(self) -> Sequence[QueuedCriterion]: ...


Item = TypeVar("Item", bound=QueuedItem)


def disagreement_count(item: QueuedItem, others: Mapping[tuple[str, str], set[str]]) -> int:
    """Criteria of ``item`` where the judges disagree or another reviewer's label differs from
    the final verdict (``others``: (item, criterion) → the labels other reviewers gave)."""
    return sum(_disagrees(item.id, c, others) for c in item.criteria)


def _disagrees(item_id: str, row: QueuedCriterion, others: Mapping[tuple[str, str], set[str]]) -> bool:
    theirs = others.get((item_id, row.id), set())
    return row.judges_disagree or any(label != row.final for label in theirs)


def pending(item: QueuedItem, labelled: set[tuple[str, str]]) -> bool:
    return any((item.id, c.id) not in labelled for c in item.criteria)


def queue(items: Iterable[Item], *, labelled: set[tuple[str, str]],
          others: Mapping[tuple[str, str], set[str]], order: str) -> list[Item]:
    """The pending items, in the order the reviewer asked for."""
    waiting = [item for item in items if pending(item, labelled)]
    if order == "disagreements":
        waiting.sort(key=lambda item: (-disagreement_count(item, others), item.index))
    return waiting


def next_index(items: Sequence[QueuedItem], *, after: int | None, labelled: set[tuple[str, str]],
               others: Mapping[tuple[str, str], set[str]], order: str) -> int | None:
    """The item to open after item number ``after`` (None: from the start); None when nothing
    is pending. The queue wraps around, so a skipped item comes back."""
    waiting = queue(items, labelled=labelled, others=others, order=order)
    if not waiting:
        return None
    if after is None:
        return waiting[0].index
    positions = [i for i, item in enumerate(waiting) if item.index == after]
    if positions:
        rest = waiting[positions[0] + 1:] + waiting[:positions[0]]
        return rest[0].index if rest else waiting[0].index
    if order == "input":
        later = [item.index for item in waiting if item.index > after]
        return later[0] if later else waiting[0].index
    return waiting[0].index
