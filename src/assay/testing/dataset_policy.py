"""The fake judge answering from a labelled dataset: its ground truth, or a perturbed copy.

:class:`DatasetPolicy` looks up the graded response and criterion in an Autorubric dataset (or
any items + labels) and answers the human label, so a whole grade → agreement run against it
gives perfect agreement. :func:`perturb_labels` changes a seeded share of the labels in ways that
move each metric as it should (a binary label flips; an ordinal label moves one step, so
adjacent accuracy stays 1; a nominal label takes the next option; an N/A label becomes the first
scored option), and :func:`write_perturbed_dataset` writes such a copy for the fake judge to
answer from: agreement against the original then equals the share of labels left unchanged.

From the shell: ``assay fake-judge --policy dataset:charm100_sample.json``, or
``--policy perturbed:0.3:charm100_sample.json --seed 4`` to answer from a perturbed copy
(``--error-rate 0.2`` instead wraps either in random wrong answers).

Example:
    >>> from assay.item import Item
    >>> from assay.rubric import Rubric
    >>> from assay.testing.prompts import CriterionView
    >>> from assay.verdict import Verdict
    >>> rubric = Rubric(criteria=[{"id": "scrape", "text": "Says to scrape.", "weight": 5}])
    >>> item = Item(id="q1", prompt="Bee?", response="Scrape it.", rubric=rubric)
    >>> policy = DatasetPolicy.from_items([item], [Verdict(item_id="q1", criterion_id="scrape",
    ...                                                    verdict="UNMET")])
    >>> policy(CriterionView("scrape", "Says to scrape.", "Scrape it."))
    'UNMET'
    >>> [v.decision.value for v in perturb_labels([item], policy.labels, rate=1.0, seed=0)]
    ['MET']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import InputError
from assay.grading.seeding import rng_for
from assay.item import Item
from assay.rubric.criterion import Criterion, CriterionKind
from assay.testing.prompts import CriterionView
from assay.verdict import Decision, Verdict


@dataclass
class DatasetPolicy:
    """Answers the label of (criterion id, graded response); ``default`` when unknown."""

    answers: dict[tuple[str, str], str] = field(default_factory=dict)
    labels: list[Verdict] = field(default_factory=list, repr=False)
    default: str = "CANNOT_ASSESS"

    @classmethod
    def from_items(cls, items: Iterable[Item], labels: Iterable[Verdict],
                   default: str = "CANNOT_ASSESS") -> DatasetPolicy:
        by_id = {i.id: i for i in items}
        labels = list(labels)
        answers: dict[tuple[str, str], str] = {}
        for label in labels:
            item = by_id.get(label.item_id)
            if item is None or item.response is None:
                continue
            answers.setdefault((label.criterion_id, item.response.strip()),
                               _answer(label, _criterion(item, label.criterion_id)))
        return cls(answers, labels, default)

    @classmethod
    def from_file(cls, path: str | Path, default: str = "CANNOT_ASSESS") -> DatasetPolicy:
        """From an Autorubric dataset file (its items and ground truth)."""
        from assay.io.autorubric_dataset import read_dataset

        data = read_dataset(path)
        return cls.from_items(data.items, data.labels, default)

    def __call__(self, view: CriterionView) -> str:
        key = (view.criterion_id or "", (view.response_text or "").strip())
        return self.answers.get(key, self.default)


def dataset_policy(kind: str, arg: str, *, seed: int = 0) -> DatasetPolicy:
    """The policy of ``--policy dataset:FILE`` or ``--policy perturbed:RATE:FILE``."""
    if kind == "dataset":
        return DatasetPolicy.from_file(arg)
    rate, _, path = arg.partition(":")
    try:
        share = float(rate)
    except ValueError:
        share = -1.0
    if not path or not 0.0 <= share <= 1.0:
        raise InputError(f"--policy perturbed:{arg}: expected perturbed:RATE:FILE.json with "
                         "RATE in [0, 1]")
    from assay.io.autorubric_dataset import read_dataset

    data = read_dataset(path)
    return DatasetPolicy.from_items(data.items, perturb_labels(data.items, data.labels,
                                                               rate=share, seed=seed))


def perturb_labels(items: Iterable[Item], labels: Sequence[Verdict], *, rate: float,
                   seed: int = 0) -> list[Verdict]:
    """A copy of ``labels`` with about ``rate`` of them changed (seeded, per item and criterion;
    see the module docstring for how each kind changes)."""
    by_id = {i.id: i for i in items}
    out = []
    for label in labels:
        draw = rng_for(seed, "perturb", label.item_id, label.criterion_id).random()
        if draw < rate:
            label = _changed(label, _criterion(by_id.get(label.item_id), label.criterion_id))
        out.append(label)
    return out


def write_perturbed_dataset(source: str | Path, target: str | Path, *, rate: float,
                            seed: int = 0) -> int:
    """Write a copy of an Autorubric dataset with perturbed ground truth; returns how many
    labels changed."""
    from assay.io.autorubric_dataset import read_dataset
    from assay.io.autorubric_dataset_write import write_dataset

    data = read_dataset(source)
    changed = perturb_labels(data.items, data.labels, rate=rate, seed=seed)
    write_dataset(data.items, changed, target, rubric=data.rubric)
    return sum(1 for a, b in zip(data.labels, changed) if a != b)


# -- internals --------------------------------------------------------------------------------

def _criterion(item: Item | None, criterion_id: str) -> Criterion | None:
    if item is None or item.rubric is None:
        return None
    return next((c for c in item.rubric.criteria if c.id == criterion_id), None)


def _answer(label: Verdict, criterion: Criterion | None) -> str:
    if label.option is None:
        return str(label.decision)  # a StrEnum: its value (a label without option has a decision)
    if criterion is not None:
        try:
            return criterion.option(label.option).label  # the exact label the judge is shown
        except KeyError:
            pass
    return label.option


def _changed(label: Verdict, criterion: Criterion | None) -> Verdict:
    if label.option is None:
        flipped = Decision.UNMET if label.decision is Decision.MET else Decision.MET
        return label.model_copy(update={"decision": flipped})
    if criterion is None:
        return label
    scored = [o.label for o in criterion.options if not o.na]
    current = criterion.option(label.option)
    if current.na:
        new = scored[0]
    elif criterion.kind is CriterionKind.ORDINAL:
        at = scored.index(current.label)
        new = scored[at + 1] if at + 1 < len(scored) else scored[at - 1]
    else:
        new = scored[(scored.index(current.label) + 1) % len(scored)]
    return label.model_copy(update={"option": new})
