"""Few-shot calibration: labelled examples drawn per criterion, balanced across verdicts.

The pool for a criterion holds its own ``examples`` (from the rubric file) and, when given,
labelled items: an item's response with the reference verdict for that criterion. Selection is
seeded from (master seed, criterion id), so every item of a run sees the same examples for a
criterion (friendly to providers' prompt caches); the item being graded is never its own
example. With ``balance`` the draw takes the classes (MET / UNMET, or each option label) in turn
so that no class outnumbers another by more than one, and the judge cannot learn a base rate
from the examples. The chosen examples are then shown in a seeded order.

Example:
    >>> from assay.rubric import Criterion
    >>> c = Criterion(id="stinger", text="Explains how to remove the stinger.", examples=[
    ...     {"response": f"met {i}", "verdict": "MET"} for i in range(5)] + [
    ...     {"response": f"unmet {i}", "verdict": "UNMET"} for i in range(5)])
    >>> picked = select_examples(c, FewShot(n=4), master_seed=0)
    >>> sorted(e.label for e in picked)
    ['MET', 'MET', 'UNMET', 'UNMET']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from assay.grading.seeding import rng_for
from assay.item import Item
from assay.rubric import Criterion
from assay.verdict import Verdict


@dataclass(frozen=True)
class FewShot:
    """How many examples per criterion, balanced or not, with or without reasons."""

    n: int = 3
    balance: bool = True
    include_reason: bool = False

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("few-shot n must be >= 0")


@dataclass(frozen=True)
class Example:
    """One labelled response: ``label`` is MET / UNMET / CANNOT_ASSESS or an option label."""

    response: str
    label: str
    reason: str | None = None
    source_item: str | None = None


def pool_from_criterion(criterion: Criterion) -> list[Example]:
    return [Example(e.response, _canonical(criterion, e.verdict), e.reason) for e in criterion.examples]


def pools_from_labelled_items(
    items: Iterable[Item], labels: Iterable[Verdict]
) -> dict[str, list[Example]]:
    """criterion id -> examples, from items with responses and their reference verdicts."""
    responses = {item.id: item.response for item in items if item.response}
    pools: dict[str, list[Example]] = defaultdict(list)
    for v in labels:
        response = responses.get(v.item_id)
        if response is None:
            continue
        label = v.option if v.option is not None else str(v.decision)
        pools[v.criterion_id].append(Example(response, label, v.explanation or None, v.item_id))
    return dict(pools)


def select_examples(
    criterion: Criterion,
    config: FewShot,
    *,
    master_seed: int,
    extra_pool: Mapping[str, list[Example]] | None = None,
    exclude_item: str | None = None,
) -> list[Example]:
    """The examples to show for ``criterion`` when grading ``exclude_item`` (see module doc)."""
    pool = pool_from_criterion(criterion)
    if extra_pool:
        pool += [
            Example(e.response, _canonical(criterion, e.label), e.reason, e.source_item)
            for e in extra_pool.get(criterion.id, [])
        ]
    if config.n == 0 or not pool:
        return []
    rng = rng_for(master_seed, "fewshot", criterion.id)
    # Shuffle the whole pool once (independent of which item is graded), then skip the item.
    order = list(range(len(pool)))
    rng.shuffle(order)
    candidates = [pool[i] for i in order if exclude_item is None or pool[i].source_item != exclude_item]
    if not config.balance:
        chosen = candidates[: config.n]
    else:
        chosen = _round_robin(candidates, config.n, [c for c in _class_order(criterion)], rng)
    rng.shuffle(chosen)
    return chosen


def _class_order(criterion: Criterion) -> list[str]:
    if criterion.is_multi_choice:
        return [o.label for o in criterion.options] + ["CANNOT_ASSESS"]
    return ["MET", "UNMET", "CANNOT_ASSESS"]


def _round_robin(candidates: list[Example], n: int, classes: list[str], rng) -> list[Example]:
    by_class: dict[str, list[Example]] = defaultdict(list)
    for example in candidates:
        by_class[example.label].append(example)
    present = [c for c in classes if by_class.get(c)]
    rng.shuffle(present)  # which class gets the odd extra example is itself seeded
    chosen: list[Example] = []
    while len(chosen) < n and any(by_class[c] for c in present):
        for c in present:
            if by_class[c] and len(chosen) < n:
                chosen.append(by_class[c].pop(0))
    return chosen


def _canonical(criterion: Criterion, label: str) -> str:
    """MET/UNMET/CANNOT_ASSESS in upper case; option labels as the criterion spells them."""
    upper = label.strip().upper()
    if upper in {"MET", "UNMET", "CANNOT_ASSESS"}:
        return upper
    if criterion.is_multi_choice:
        return criterion.option(label).label
    raise ValueError(f"criterion {criterion.id!r}: example label {label!r} is not MET/UNMET")
