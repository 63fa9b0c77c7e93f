"""Reliability between the judges of an ensemble (no ground truth needed).

Units are (item, criterion) pairs; a judge's rating is its coded label (N/A = missing).
Pooled over all units: percent agreement, Krippendorff's α (nominal) and Fleiss' κ (over the
units every judge rated with a non-N/A label). Per criterion: the same, with α level-aware
(ordinal on option steps for ordinal criteria, nominal otherwise). On per-item scores (when
given): the six Shrout-Fleiss ICCs and interval α.

Example:
    >>> from assay.verdict import Verdict
    >>> vs = [Verdict(item_id=i, criterion_id="c", decision=v, judge=j)
    ...       for j, labels in {"a": "MMUU", "b": "MMUM"}.items()
    ...       for i, v in zip("wxyz", ["MET" if x == "M" else "UNMET" for x in labels])]
    >>> r = inter_judge(vs)
    >>> r.judges, r.percent_agreement.value
    (['a', 'b'], 0.75)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from assay.metrics.labels import Code, CriteriaLookup, CriterionInfo, as_label
from assay.metrics.reliability import (
    AlphaLevel,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    percent_agreement,
)
from assay.metrics.results import Metric
from assay.rubric.criterion import CriterionKind
from assay.verdict import Verdict


class CriterionReliability(BaseModel):
    model_config = ConfigDict(frozen=True)

    n_units: int
    alpha: Metric
    alpha_level: str
    fleiss_kappa: Metric
    percent_agreement: Metric


class InterJudgeReliability(BaseModel):
    model_config = ConfigDict(frozen=True)

    judges: list[str]
    n_units: int
    percent_agreement: Metric
    alpha_nominal: Metric
    fleiss_kappa: Metric
    per_criterion: dict[str, CriterionReliability]
    score_icc: dict[str, Metric] | None = None
    score_alpha_interval: Metric | None = None


def _tables(
    units: Mapping[tuple[str, str], dict[str, Code]], judges: list[str]
) -> tuple[list[list[Code]], list[list[Code]]]:
    """(units × judges with None for missing, complete units × judges)."""
    matrix = [[ratings.get(j) for j in judges] for ratings in units.values()]
    complete = [row for row in matrix if all(x is not None for x in row)]
    return matrix, complete


def inter_judge(
    verdicts: Iterable[Verdict],
    criteria: CriteriaLookup | None = None,
    *,
    item_scores: Mapping[str, Mapping[str, float | None]] | None = None,
) -> InterJudgeReliability:
    """Reliability among the judges in ``verdicts``; ``item_scores`` is judge → item → score."""
    criteria = dict(criteria or {})
    verdicts = list(verdicts)
    judges = sorted({v.judge for v in verdicts})
    grouped: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in verdicts:
        grouped[(v.item_id, v.criterion_id)].append(v)
    units: dict[tuple[str, str], dict[str, Code]] = {}
    infos: dict[tuple[str, str], CriterionInfo] = {}
    for key, group in grouped.items():
        info = criteria.get(key) or CriterionInfo.inferred(key[1], group)
        infos[key] = info
        units[key] = {v.judge: info.code(v) for v in group}
    matrix, complete = _tables(units, judges)
    per_criterion = {}
    for cid in sorted({k[1] for k in units}):
        keys = [k for k in units if k[1] == cid]
        info = infos[keys[0]]
        sub = {k: units[k] for k in keys}
        m, c = _tables(sub, judges)
        level: AlphaLevel
        data: list[list[int | None]] | list[list[Code]]
        if info.kind is CriterionKind.ORDINAL:
            level = "ordinal"
            data = [[None if x is None else info.steps[as_label(x)] for x in row] for row in m]
        else:
            level, data = "nominal", m
        per_criterion[cid] = CriterionReliability(
            n_units=len(keys),
            alpha=krippendorff_alpha(list(map(list, zip(*data))), level),
            alpha_level=level,
            fleiss_kappa=fleiss_kappa(c),
            percent_agreement=percent_agreement(m),
        )
    score_icc = score_alpha = None
    if item_scores is not None:
        items = sorted({i for s in item_scores.values() for i in s})
        scored = [[item_scores[j].get(i) for j in judges] for i in items]
        score_icc = icc([[float("nan") if x is None else x for x in row] for row in scored])
        score_alpha = krippendorff_alpha(list(map(list, zip(*scored))), "interval")
    return InterJudgeReliability(
        judges=judges,
        n_units=len(units),
        percent_agreement=percent_agreement(matrix),
        alpha_nominal=krippendorff_alpha(list(map(list, zip(*matrix))), "nominal"),
        fleiss_kappa=fleiss_kappa(complete),
        per_criterion=per_criterion,
        score_icc=score_icc,
        score_alpha_interval=score_alpha,
    )
