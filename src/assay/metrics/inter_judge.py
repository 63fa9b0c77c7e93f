"""Reliability between the judges of an ensemble (no ground truth needed).

Units are (item, criterion) pairs; a judge's rating is its coded label (N/A = missing).
Pooled over all units: percent agreement, Krippendorff's α (nominal) and Fleiss' κ (over the
units every judge rated with a non-N/A label), where each criterion's labels are categories of
their own (MET on a penalty criterion is not the category MET on a positive one, as within one
criterion's figures). Per criterion: the same, with α level-aware (ordinal on option steps for
ordinal criteria, nominal otherwise). On per-item scores (when given): the six Shrout-Fleiss
ICCs and interval α.

Every figure comes with a 95% percentile bootstrap CI over items (an item's criteria are drawn
together; ``n_resamples`` seeded with ``seed``), computed from sums over items
(:mod:`assay.metrics.reliability_sums`); where no CI can be given, ``reason`` says why.

Example:
    >>> from assay.verdict import Verdict
    >>> vs = [Verdict(item_id=i, criterion_id="c", decision=v, judge=j)
    ...       for j, labels in {"a": "MMUU", "b": "MMUM"}.items()
    ...       for i, v in zip("wxyz", ["MET" if x == "M" else "UNMET" for x in labels])]
    >>> r = inter_judge(vs)
    >>> r.judges, r.percent_agreement.value, r.percent_agreement.ci is not None
    (['a', 'b'], 0.75, True)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.metrics.agreement_ci import interval_metric, item_resamples
from assay.metrics.labels import Code, CriteriaLookup, CriterionInfo, as_label
from assay.metrics.reliability import AlphaLevel, icc, krippendorff_alpha
from assay.metrics.reliability_sums import (
    UnitTable,
    fleiss_kappa,
    interval_alpha,
    nominal_alpha,
    ordinal_alpha,
    percent_agreement,
    with_data,
)
from assay.metrics.reliability_sums import icc as icc_sums
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


def inter_judge(
    verdicts: Iterable[Verdict],
    criteria: CriteriaLookup | None = None,
    *,
    item_scores: Mapping[str, Mapping[str, float | None]] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    min_units: int = 1,
) -> InterJudgeReliability:
    """Reliability among the judges in ``verdicts``; ``item_scores`` is judge → item → score.

    CIs: ``n_resamples`` bootstrap resamples of the items, seeded (0: none; see the module
    docstring). ``per_criterion`` holds the criteria rated on ``min_units`` units or more (the
    others count in the pooled figures alone: a run of thousands of criteria of a few units
    each spends its time and memory on figures no one reads otherwise).
    """
    criteria = dict(criteria or {})
    coded, infos_by_key = _coded(verdicts, criteria)
    judges = sorted({judge for ratings in coded.values() for judge in ratings})
    units: dict[tuple[str, str], list[Code]] = {}
    infos: dict[str, CriterionInfo] = {}
    by_criterion: dict[str, list[int]] = defaultdict(list)
    for key, ratings in coded.items():
        infos.setdefault(key[1], infos_by_key[key])
        by_criterion[key[1]].append(len(units))
        units[key] = [ratings.get(j) for j in judges]
    score_icc = score_alpha = None  # first: each bootstrap's weights are freed before the next
    if item_scores is not None:
        score_icc, score_alpha = _score_reliability(item_scores, judges, seed, n_resamples)
    boot = _Bootstrap(sorted({k[0] for k in units}), seed, n_resamples)
    # each criterion's labels are categories of their own: (criterion, label)
    pooled = boot.table([(k[0], [None if x is None else (k[1], x) for x in r])
                         for k, r in units.items()], len(judges))
    keys = list(units)
    per_criterion = {
        cid: _criterion(infos[cid], [units[keys[u]] for u in by_criterion[cid]],
                        pooled.subset(np.array(by_criterion[cid], int)), boot)
        for cid in sorted(by_criterion) if len(by_criterion[cid]) >= min_units}
    return InterJudgeReliability(
        judges=judges,
        n_units=len(units),
        percent_agreement=boot.percent_agreement(pooled),
        alpha_nominal=boot.metric(nominal_alpha(pooled, boot.weights), *_alpha_n(pooled)),
        fleiss_kappa=boot.fleiss(pooled),
        per_criterion=per_criterion,
        score_icc=score_icc,
        score_alpha_interval=score_alpha,
    )


def _coded(verdicts: Iterable[Verdict], criteria: CriteriaLookup,
           ) -> tuple[dict[tuple[str, str], dict[str, Code]], dict[tuple[str, str], CriterionInfo]]:
    """Each unit's coded label per judge, and each unit's criterion info, reading the verdicts
    once: a verdict whose criterion ``criteria`` knows is coded as it is read and not kept (so
    that a run's verdicts can stream in, in little memory); the others are kept until all are
    read, to infer their criterion's kind from them."""
    coded: dict[tuple[str, str], dict[str, Code]] = {}
    infos: dict[tuple[str, str], CriterionInfo] = {}
    unknown: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in verdicts:
        key = (v.item_id, v.criterion_id)
        ratings = coded.setdefault(key, {})
        info = criteria.get(key)
        if info is None:
            unknown[key].append(v)
        else:
            infos[key] = info
            ratings[v.judge] = info.code(v)
    for key, group in unknown.items():
        info = infos[key] = CriterionInfo.inferred(key[1], group)
        coded[key].update((v.judge, info.code(v)) for v in group)
    return coded, infos


class _Bootstrap:
    """The weights of the data and of its item resamples, shared by every figure."""

    def __init__(self, item_ids: list[str], seed: int, n_resamples: int) -> None:
        self.index = {item: i for i, item in enumerate(item_ids)}
        resamples = (item_resamples(len(item_ids), n_resamples=n_resamples, seed=seed)
                     if n_resamples > 0 and len(item_ids) >= 2 else None)
        self.weights = with_data(len(item_ids), resamples)
        self.why_no_ci = ("CI not computed (no bootstrap resamples asked for)" if n_resamples <= 0
                          else "CI undefined: fewer than two items" if resamples is None
                          else None)

    def restricted(self, table: UnitTable) -> tuple[_Bootstrap, UnitTable]:
        """This bootstrap and ``table`` on the items ``table`` touches only (the same figures,
        for less work: a criterion of a few items is resampled over those items' weights)."""
        items, local = np.unique(table.items, return_inverse=True)
        narrow = object.__new__(_Bootstrap)
        narrow.index = {}
        narrow.weights = self.weights[:, items] if len(items) >= 2 else self.weights[:1, items]
        narrow.why_no_ci = self.why_no_ci or (None if len(items) >= 2 else
                                              "CI undefined: on fewer than two items")
        return narrow, UnitTable(local.reshape(-1), table.codes, len(items))

    def table(self, units: list[tuple[str, list[Any]]], raters: int) -> UnitTable:
        return UnitTable.of([(self.index[item], ratings) for item, ratings in units],
                            len(self.index), raters)

    def metric(self, values: np.ndarray, n: int, reason: str) -> Metric:
        """The figure on the data (first value) with the CI of its resamples (the others)."""
        metric = Metric.of(float(values[0]), n=n, reason=reason)
        if metric.value is None:
            return metric
        if self.why_no_ci is not None:
            return metric.model_copy(update={"reason": self.why_no_ci})
        return interval_metric(metric, values[1:])

    def percent_agreement(self, table: UnitTable) -> Metric:
        both, _ = table.pair_counts()
        return self.metric(percent_agreement(table, self.weights), int(both.sum()),
                           "no unit was rated by two raters")

    def fleiss(self, table: UnitTable) -> Metric:
        complete = int((table.rated() == table.raters).sum())
        if complete < 2 or table.raters < 2:
            return Metric.undefined("needs ≥2 units and ≥2 raters", n=complete)
        return self.metric(fleiss_kappa(table, self.weights), complete,
                           "every rating is the same category")


def _alpha_n(table: UnitTable) -> tuple[int, str]:
    pairable = int((table.rated() >= 2).sum())
    return pairable, _why_no_alpha(pairable)


def _why_no_alpha(pairable: int) -> str:
    """Why α is undefined over ``pairable`` units rated at least twice."""
    return ("fewer than two distinct values: α is undefined" if pairable
            else "no unit was rated by two raters")


def _criterion(info: CriterionInfo, ratings: list[list[Code]], table: UnitTable,
               boot: _Bootstrap) -> CriterionReliability:
    """One criterion's figures (``table``: its units), α level-aware by the ``krippendorff``
    package, with the CIs of their sums."""
    boot, table = boot.restricted(table)
    level: AlphaLevel = "ordinal" if info.kind is CriterionKind.ORDINAL else "nominal"
    steps: list[list[Any]] = ([[None if x is None else info.steps[as_label(x)] for x in r]
                               for r in ratings] if level == "ordinal" else [])
    alpha = krippendorff_alpha(list(map(list, zip(*(steps or ratings)))), level)
    if alpha.value is not None and boot.why_no_ci is not None:
        alpha = alpha.model_copy(update={"reason": boot.why_no_ci})
    elif alpha.value is not None:
        resampled = (ordinal_alpha(UnitTable.of_steps(table.items, steps, table.n_items),
                                   boot.weights, len(info.options))
                     if level == "ordinal" else nominal_alpha(table, boot.weights))
        alpha = boot.metric(np.concatenate([[alpha.value], resampled[1:]]), alpha.n, "")
    return CriterionReliability(
        n_units=len(ratings),
        alpha=alpha,
        alpha_level=level,
        fleiss_kappa=boot.fleiss(table),
        percent_agreement=boot.percent_agreement(table),
    )


def _score_reliability(
    item_scores: Mapping[str, Mapping[str, float | None]], judges: list[str], seed: int,
    n_resamples: int,
) -> tuple[dict[str, Metric], Metric]:
    """The six ICCs (over the items every judge scored) and interval α of per-item scores."""
    items = sorted({i for s in item_scores.values() for i in s})
    scored = [[item_scores.get(j, {}).get(i) for j in judges] for i in items]
    complete = [row for row in scored if all(x is not None for x in row)]
    point = icc([[float("nan") if x is None else x for x in row] for row in scored])
    icc_boot = _Bootstrap([str(i) for i in range(len(complete))], seed, n_resamples)
    if len(complete) >= 2 and len(judges) >= 2:
        resampled = icc_sums(np.array(complete, float), icc_boot.weights)
        point = {name: m if m.value is None else
                 icc_boot.metric(np.concatenate([[m.value], resampled[name][1:]]), m.n,
                                 m.reason or "")
                 for name, m in point.items()}
    del icc_boot  # its weights go before the next bootstrap's are drawn
    alpha_boot = _Bootstrap(items, seed, n_resamples)
    pairable = sum(sum(x is not None for x in row) >= 2 for row in scored)
    alpha = alpha_boot.metric(interval_alpha(scored, alpha_boot.weights), pairable,
                              _why_no_alpha(pairable))
    return point, alpha
