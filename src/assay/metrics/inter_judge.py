"""Reliability between the judges of an ensemble (no ground truth needed).

Units are (item, criterion) pairs; a judge's rating is its verdict value (MET / UNMET, or the
option label of an ordinal or nominal criterion; N/A = missing). Pooled over all units: percent
agreement, Krippendorff's α (nominal), Fleiss' κ (over the units every judge rated with a
non-N/A value) and Gwet's AC1, with chance agreement computed over the verdict values
themselves, exactly as ``krippendorff.alpha(reliability_data, level_of_measurement="nominal")``
and statsmodels' ``fleiss_kappa`` compute it on the judges × units table. Per criterion: the
same, with α level-aware (ordinal on option steps for ordinal criteria, nominal otherwise); when
every criterion is ordinal on one scale, pooled α at the ordinal level too. On per-item scores
(when given): the six Shrout-Fleiss ICCs and interval α.

AC1's scale (its q) is every value the units' criteria allow: MET and UNMET for a binary
criterion, the scored options of a multi-choice one, used or not. Where one value is common
(MET on 90% of criteria), α and κ can be low although the raters agree on most units (the "κ
paradox"); AC1 is not, which is why the field reports it beside them. A rater that answers at
random gets α and κ near 0 whatever the prevalence, and AC1 near 0 only when the values are
about equally common: read them together.

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
    gwet_ac1,
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
    ac1: Metric
    percent_agreement: Metric


class InterJudgeReliability(BaseModel):
    model_config = ConfigDict(frozen=True)

    judges: list[str]
    n_units: int
    percent_agreement: Metric
    alpha_nominal: Metric
    fleiss_kappa: Metric
    ac1: Metric
    per_criterion: dict[str, CriterionReliability]
    alpha_ordinal: Metric | None = None
    """Pooled α at the ordinal level, when every criterion is ordinal on one scale."""
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
    scales: set[tuple[CriterionKind, tuple[str, ...]]] = set()
    by_criterion: dict[str, list[int]] = defaultdict(list)
    for key, ratings in coded.items():
        info = infos_by_key[key]
        infos.setdefault(key[1], info)
        scales.add((info.kind, info.options))
        by_criterion[key[1]].append(len(units))
        units[key] = [ratings.get(j) for j in judges]
    score_icc = score_alpha = None  # first: each bootstrap's weights are freed before the next
    if item_scores is not None:
        score_icc, score_alpha = _score_reliability(item_scores, judges, seed, n_resamples)
    boot = _Bootstrap(sorted({k[0] for k in units}), seed, n_resamples)
    pooled = boot.table([(k[0], [verdict_value(x) for x in r]) for k, r in units.items()],
                        len(judges))
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
        alpha_ordinal=_pooled_ordinal_alpha(scales, units, pooled, boot),
        fleiss_kappa=boot.fleiss(pooled),
        ac1=boot.ac1(pooled, len(set().union(*(scale(*s) for s in scales)))),
        per_criterion=per_criterion,
        score_icc=score_icc,
        score_alpha_interval=score_alpha,
    )


def verdict_value(code: Code) -> str | None:
    """A coded verdict as the value raters agree on: MET / UNMET, or the option label.

    >>> verdict_value(True), verdict_value("partly"), verdict_value(None)
    ('MET', 'partly', None)
    """
    if isinstance(code, bool):
        return "MET" if code else "UNMET"
    return code


def scale(kind: CriterionKind, options: tuple[str, ...]) -> set[str]:
    """Every value a rating of a criterion can take (N/A aside): AC1's categories.

    >>> sorted(scale(CriterionKind.BINARY, ())), sorted(scale(CriterionKind.ORDINAL, ("lo", "hi")))
    (['MET', 'UNMET'], ['hi', 'lo'])
    """
    return {"MET", "UNMET"} if kind is CriterionKind.BINARY else set(options)


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

    def ac1(self, table: UnitTable, n_categories: int) -> Metric:
        pairable = int((table.rated() >= 2).sum())
        if n_categories < 2:
            return Metric.undefined("AC1 needs a scale of two or more values", n=pairable)
        return self.metric(gwet_ac1(table, self.weights, n_categories), pairable,
                           "no unit was rated by two raters")


def _pooled_ordinal_alpha(scales: set[tuple[CriterionKind, tuple[str, ...]]],
                          units: Mapping[tuple[str, str], list[Code]], pooled: UnitTable,
                          boot: _Bootstrap) -> Metric | None:
    """α at the ordinal level over every unit, on option steps, when all the units' criteria
    are ordinal on one scale (the same options in the same order); None otherwise."""
    if len(scales) != 1:
        return None
    [(kind, options)] = scales
    if kind is not CriterionKind.ORDINAL:
        return None
    step = {label: i for i, label in enumerate(options)}
    steps = [[None if x is None else step[as_label(x)] for x in r] for r in units.values()]
    table = UnitTable.of_steps(pooled.items, steps, pooled.n_items)
    return boot.metric(ordinal_alpha(table, boot.weights, len(options)), *_alpha_n(pooled))


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
        ac1=boot.ac1(table, len(scale(info.kind, info.options))),
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
