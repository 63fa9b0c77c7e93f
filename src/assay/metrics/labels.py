"""Turning verdicts into comparable labels, and pairing a judge's verdicts with human labels.

Human labels use the verdict line format (one :class:`~assay.verdict.Verdict` per line, with
``judge`` naming the human rater). A verdict is coded against its criterion as:

- binary: True (MET), False (UNMET);
- ordinal/nominal: the option label, with its step (position among scored options) and value;
- N/A (``None``): CANNOT_ASSESS, or an option flagged ``na``.

When several humans labelled the same (item, criterion), the ground truth is their majority
label; a tie leaves that pair out (counted in ``AlignedPairs.tied``).

Example:
    >>> from assay.verdict import Verdict
    >>> info = CriterionInfo.binary("remove")
    >>> info.code(Verdict(item_id="q1", criterion_id="remove", decision="MET"))
    True
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Union

from assay.errors import InputError, Issue
from assay.rubric.criterion import Criterion, CriterionKind
from assay.verdict import Decision, Verdict

Code = Union[bool, str, None]  # noqa: UP007  True/False (binary), option label, None = N/A


def as_flag(code: Code) -> bool:
    """A binary criterion's code: True for MET (scored pairs only, so never None)."""
    assert isinstance(code, bool), f"expected a binary code, got {code!r}"
    return code


def as_label(code: Code) -> str:
    """A multi-choice criterion's code: the option label (scored pairs only, so never None)."""
    assert isinstance(code, str), f"expected an option label, got {code!r}"
    return code


@dataclass(frozen=True)
class CriterionInfo:
    """What metrics need to know about a criterion: kind, axis, option steps and values."""

    id: str
    kind: CriterionKind
    axis: str | None = None
    options: tuple[str, ...] = ()
    steps: Mapping[str, int] = field(default_factory=dict)
    values: Mapping[str, float] = field(default_factory=dict)
    na_options: frozenset[str] = frozenset()
    criterion: Criterion | None = None

    @classmethod
    def binary(cls, criterion_id: str, axis: str | None = None) -> CriterionInfo:
        return cls(id=criterion_id, kind=CriterionKind.BINARY, axis=axis)

    @classmethod
    def from_criterion(cls, criterion: Criterion) -> CriterionInfo:
        scored = [o for o in criterion.options if not o.na]
        return cls(
            id=criterion.id,
            kind=criterion.kind,
            axis=criterion.axis,
            options=tuple(o.label for o in scored),
            steps={o.label: i for i, o in enumerate(scored)},
            values={o.label: float(o.value) for o in scored if o.value is not None},
            na_options=frozenset(o.label for o in criterion.options if o.na),
            criterion=criterion,
        )

    @classmethod
    def inferred(cls, criterion_id: str, verdicts: Iterable[Verdict]) -> CriterionInfo:
        """Without a rubric: binary if verdicts carry MET/UNMET, else nominal over seen options."""
        seen = sorted({v.option for v in verdicts if v.option is not None})
        if not seen:
            return cls.binary(criterion_id)
        return cls(
            id=criterion_id, kind=CriterionKind.NOMINAL, options=tuple(seen),
            steps={o: i for i, o in enumerate(seen)},
        )

    def code(self, verdict: Verdict) -> Code:
        """The comparable label of ``verdict``; raises ValueError if it does not fit the kind."""
        if verdict.decision is Decision.CANNOT_ASSESS:
            return None
        if self.kind is CriterionKind.BINARY:
            if verdict.decision is None:
                raise ValueError(f"binary criterion {self.id!r} got option {verdict.option!r}")
            return verdict.decision is Decision.MET
        if verdict.option is None:
            raise ValueError(f"{self.kind.value} criterion {self.id!r} needs an option, "
                             f"got verdict {verdict.decision}")
        label = self._canonical(verdict.option)
        return None if label in self.na_options else label

    def _canonical(self, label: str) -> str:
        if label in self.steps or label in self.na_options:
            return label
        if self.criterion is not None:
            try:
                return self.criterion.option(label).label
            except KeyError:
                pass
        raise ValueError(f"criterion {self.id!r} has no option {label!r}")


@dataclass(frozen=True)
class LabelPair:
    """One (item, criterion) with the human ground truth and the judge's label."""

    item_id: str
    criterion: CriterionInfo
    true: Code
    pred: Code


@dataclass
class AlignedPairs:
    """A judge's verdicts paired with ground truth, and what could not be paired."""

    judge: str
    pairs: list[LabelPair]
    missing_verdicts: int = 0  # labelled (item, criterion) the judge gave no verdict on
    unlabelled: int = 0  # verdicts with no human label
    tied: int = 0  # human labels tied, no ground truth


CriteriaLookup = Mapping[tuple[str, str], CriterionInfo]


def ground_truth(labels: Sequence[Verdict], info: CriterionInfo) -> tuple[Code, bool]:
    """Majority label of several human labels; returns (label, tied)."""
    counts = Counter(info.code(v) for v in labels)
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, True
    return ranked[0][0], False


def align(
    verdicts: Iterable[Verdict],
    labels: Iterable[Verdict],
    criteria: CriteriaLookup,
) -> dict[str, AlignedPairs]:
    """Pair each judge's verdicts with the human labels, per judge (sorted by judge name).

    ``criteria`` maps (item_id, criterion_id) to its :class:`CriterionInfo`; pairs whose
    criterion is not in it are inferred from the labels (see :meth:`CriterionInfo.inferred`).
    """
    by_key_labels: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for label in labels:
        by_key_labels[(label.item_id, label.criterion_id)].append(label)
    by_judge: dict[str, dict[tuple[str, str], Verdict]] = defaultdict(dict)
    issues: list[Issue] = []
    for v in verdicts:
        key = (v.item_id, v.criterion_id)
        if key in by_judge[v.judge]:
            issues.append(Issue(None, None, f"{v.item_id}/{v.criterion_id}",
                                f"judge {v.judge!r} has two verdicts for this criterion"))
        by_judge[v.judge][key] = v
    if issues:
        raise InputError(issues)
    infos = dict(criteria)
    for key, group in by_key_labels.items():
        if key not in infos:
            judged = [by_judge[j][key] for j in by_judge if key in by_judge[j]]
            infos[key] = CriterionInfo.inferred(key[1], [*group, *judged])
    truths = {}
    tied_keys = set()
    for key, group in by_key_labels.items():
        try:
            truth, tied = ground_truth(group, infos[key])
        except ValueError as e:
            issues.append(Issue("labels", None, f"{key[0]}/{key[1]}", str(e)))
            continue
        if tied:
            tied_keys.add(key)
        else:
            truths[key] = truth
    result = {}
    for judge in sorted(by_judge):
        mine = by_judge[judge]
        pairs = []
        for k, v in mine.items():
            if k not in truths:
                continue
            try:
                pairs.append(LabelPair(k[0], infos[k], truths[k], infos[k].code(v)))
            except ValueError as e:
                issues.append(Issue(f"verdicts of {judge}", None, f"{k[0]}/{k[1]}", str(e)))
        result[judge] = AlignedPairs(
            judge=judge,
            pairs=pairs,
            missing_verdicts=sum(1 for k in truths if k not in mine),
            unlabelled=sum(1 for k in mine if k not in by_key_labels),
            tied=len(tied_keys),
        )
    if issues:
        raise InputError(issues)
    return result
