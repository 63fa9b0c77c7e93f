"""Agreement of a judge with human labels: per criterion, per axis, pooled, per judge.

Each criterion gets the metrics of its kind (binary, ordinal, nominal: see the
``agreement_*`` modules) over the pairs where neither side is N/A, plus N/A diagnostics.
Pooled figures (over all criteria, or all criteria of one axis) are:

- ``accuracy``: exact agreement, micro-averaged over every scored pair of every kind;
- ``binary``: the binary metrics over all binary pairs pooled;
- ``mean_kappa``: the macro mean over criteria of κ (quadratic-weighted for ordinal
  criteria, unweighted otherwise), over the criteria where κ is defined (Autorubric's
  "mean κ");
- ``na``: N/A diagnostics over all pairs.

Example:
    >>> from assay.verdict import Verdict
    >>> judge = [Verdict(item_id=i, criterion_id="c", decision=v, judge="j")
    ...          for i, v in [("a", "MET"), ("b", "UNMET"), ("c", "MET")]]
    >>> human = [Verdict(item_id=i, criterion_id="c", decision=v, judge="dr")
    ...          for i, v in [("a", "MET"), ("b", "UNMET"), ("c", "UNMET")]]
    >>> [report] = agreement(judge, human)
    >>> report.judge, round(report.pooled.accuracy.value, 3)
    ('j', 0.667)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from assay.metrics.agreement_binary import BinaryAgreement, binary_agreement
from assay.metrics.agreement_na import NADiagnostics, na_diagnostics
from assay.metrics.agreement_nominal import NominalAgreement, nominal_agreement
from assay.metrics.agreement_ordinal import OrdinalAgreement, ordinal_agreement
from assay.metrics.labels import (
    AlignedPairs,
    CriteriaLookup,
    LabelPair,
    align,
    as_flag,
    as_label,
)
from assay.metrics.results import Metric
from assay.metrics.scores import ScoreAgreement
from assay.rubric.criterion import CriterionKind
from assay.verdict import Verdict


class CriterionAgreement(BaseModel):
    model_config = ConfigDict(frozen=True)

    criterion_id: str
    kind: CriterionKind
    axis: str | None
    n: int
    binary: BinaryAgreement | None = None
    ordinal: OrdinalAgreement | None = None
    nominal: NominalAgreement | None = None
    na: NADiagnostics

    @property
    def kappa(self) -> Metric:
        """κ of the kind: quadratic-weighted for ordinal, unweighted otherwise."""
        if self.ordinal is not None:
            return self.ordinal.kappa_quadratic
        if self.binary is not None:
            return self.binary.kappa
        assert self.nominal is not None
        return self.nominal.kappa

    @property
    def accuracy(self) -> Metric:
        part = self.binary or self.nominal
        if part is not None:
            return part.accuracy
        assert self.ordinal is not None
        return self.ordinal.exact_accuracy


class PooledAgreement(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    n_criteria: int
    accuracy: Metric
    mean_kappa: Metric
    binary: BinaryAgreement
    na: NADiagnostics


class AgreementReport(BaseModel):
    """One judge against the human labels."""

    model_config = ConfigDict(frozen=True)

    judge: str
    n_pairs: int
    missing_verdicts: int
    unlabelled: int
    tied_labels: int
    pooled: PooledAgreement
    per_axis: dict[str, PooledAgreement]
    per_criterion: list[CriterionAgreement]
    scores: ScoreAgreement | None = None


def criterion_agreement(pairs: Sequence[LabelPair]) -> CriterionAgreement:
    """Metrics of one criterion's kind over its pairs (all pairs share the criterion)."""
    info = pairs[0].criterion
    scored = [p for p in pairs if p.true is not None and p.pred is not None]
    na = na_diagnostics([p.true is None for p in pairs], [p.pred is None for p in pairs])
    common = {"criterion_id": info.id, "kind": info.kind, "axis": info.axis, "n": len(scored),
              "na": na}
    if info.kind is CriterionKind.BINARY:
        return CriterionAgreement(
            **common,
            binary=binary_agreement(
                [as_flag(p.true) for p in scored], [as_flag(p.pred) for p in scored]
            ),
        )
    if info.kind is CriterionKind.ORDINAL:
        return CriterionAgreement(
            **common,
            ordinal=ordinal_agreement(
                [info.steps[as_label(p.true)] for p in scored],
                [info.steps[as_label(p.pred)] for p in scored],
                n_levels=len(info.options),
                true_values=[info.values[as_label(p.true)] for p in scored],
                pred_values=[info.values[as_label(p.pred)] for p in scored],
            ),
        )
    return CriterionAgreement(
        **common,
        nominal=nominal_agreement(
            [str(p.true) for p in scored], [str(p.pred) for p in scored], options=info.options
        ),
    )


def pooled_agreement(
    pairs: Sequence[LabelPair], per_criterion: Sequence[CriterionAgreement]
) -> PooledAgreement:
    """Pooled figures over ``pairs`` (see the module docstring)."""
    scored = [p for p in pairs if p.true is not None and p.pred is not None]
    binary = [p for p in scored if p.criterion.kind is CriterionKind.BINARY]
    kappas = [c.kappa.value for c in per_criterion if c.kappa.value is not None]
    return PooledAgreement(
        n=len(scored),
        n_criteria=len(per_criterion),
        accuracy=(
            Metric.of(sum(p.true == p.pred for p in scored) / len(scored), n=len(scored))
            if scored
            else Metric.undefined("no scored pairs")
        ),
        mean_kappa=(
            Metric.of(sum(kappas) / len(kappas), n=len(kappas))
            if kappas
            else Metric.undefined("κ is undefined for every criterion")
        ),
        binary=binary_agreement(
            [as_flag(p.true) for p in binary], [as_flag(p.pred) for p in binary]
        ),
        na=na_diagnostics([p.true is None for p in pairs], [p.pred is None for p in pairs]),
    )


def agreement_report(
    aligned: AlignedPairs, scores: ScoreAgreement | None = None
) -> AgreementReport:
    """Per-criterion, per-axis and pooled agreement of one judge's aligned pairs."""
    by_criterion: dict[str, list[LabelPair]] = defaultdict(list)
    for p in aligned.pairs:
        by_criterion[p.criterion.id].append(p)
    per_criterion = [criterion_agreement(by_criterion[c]) for c in sorted(by_criterion)]
    axes = sorted({p.criterion.axis for p in aligned.pairs if p.criterion.axis})
    per_axis = {
        axis: pooled_agreement(
            [p for p in aligned.pairs if p.criterion.axis == axis],
            [c for c in per_criterion if c.axis == axis],
        )
        for axis in axes
    }
    return AgreementReport(
        judge=aligned.judge,
        n_pairs=len(aligned.pairs),
        missing_verdicts=aligned.missing_verdicts,
        unlabelled=aligned.unlabelled,
        tied_labels=aligned.tied,
        pooled=pooled_agreement(aligned.pairs, per_criterion),
        per_axis=per_axis,
        per_criterion=per_criterion,
        scores=scores,
    )


def agreement(
    verdicts: Iterable[Verdict],
    labels: Iterable[Verdict],
    criteria: CriteriaLookup | None = None,
    *,
    score_items: Callable[..., Mapping[str, float | None]] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
) -> list[AgreementReport]:
    """Agreement of each judge in ``verdicts`` with the human ``labels``, one report per judge.

    ``criteria`` maps (item_id, criterion_id) to a :class:`~assay.metrics.labels.CriterionInfo`
    (see :func:`assay.metrics.sources.criteria_lookup`); without it, kinds are inferred.
    ``score_items`` (e.g. a partial of :func:`assay.metrics.scores.item_scores`) adds
    score-level agreement, with the human labels' majority as the reference scores; both
    scores of an item use the same criteria (:func:`same_criteria_scores`). κ, F1,
    accuracy and the score-level figures carry seeded bootstrap CIs over items
    (:mod:`assay.metrics.agreement_ci`; ``n_resamples=0`` for none).
    """
    from assay.metrics.agreement_ci import report_with_cis, scores_with_cis
    from assay.metrics.scores import paired_scores, score_agreement

    verdicts, labels = list(verdicts), list(labels)
    aligned = align(verdicts, labels, criteria or {})
    truth = majority_verdicts(labels)
    reports = []
    for judge, pairs in aligned.items():
        scores = None
        if score_items is not None:
            mine, reference, partly = same_criteria_scores(
                score_items, [v for v in verdicts if v.judge == judge], truth)
            scores = scores_with_cis(score_agreement(mine, reference), mine, reference,
                                     seed=seed, n_resamples=n_resamples)
            compared, _, _ = paired_scores(mine, reference)
            scores = scores.model_copy(update={"partly_labelled": len(partly & set(compared))})
        reports.append(report_with_cis(agreement_report(pairs, scores), pairs.pairs, seed=seed,
                                       n_resamples=n_resamples))
    return reports


def same_criteria_scores(
    score_items: Callable[..., Mapping[str, float | None]],
    judged: Sequence[Verdict],
    truth: Sequence[Verdict],
) -> tuple[Mapping[str, float | None], Mapping[str, float | None], set[str]]:
    """Each item's judge score and reference score over the same criteria: those the judge
    answered and the labels settle (an unlabelled or tied criterion counts on neither side).

    Returns ``(judge scores, reference scores, partly labelled items)``; an item is partly
    labelled when the judge answered a criterion of it that has no label.

    >>> from functools import partial
    >>> from assay.metrics.scores import item_scores
    >>> from assay.metrics.sources import inferred_rubrics
    >>> judge = [Verdict(item_id="a", criterion_id=c, decision=v, judge="j")
    ...          for c, v in [("x", "MET"), ("y", "UNMET")]]
    >>> truth = [judge[0].model_copy(update={"judge": "dr"})]
    >>> rubrics = inferred_rubrics(judge)
    >>> score = partial(item_scores, rubrics.criteria_by_item({"a"}))
    >>> same_criteria_scores(score, judge, truth)
    ({'a': 1.0}, {'a': 1.0}, {'a'})
    """
    judged_keys = {(v.item_id, v.criterion_id) for v in judged}
    labelled = {(v.item_id, v.criterion_id) for v in truth}
    common: dict[str, set[str]] = defaultdict(set)
    for item_id, criterion_id in judged_keys & labelled:
        common[item_id].add(criterion_id)
    partly = {item_id for item_id, _ in judged_keys - labelled if item_id in common}
    return (score_items(judged, only=common), score_items(truth, only=common), partly)


def majority_verdicts(labels: Iterable[Verdict]) -> list[Verdict]:
    """One verdict per (item, criterion): the most common human answer (ties: left out)."""
    from collections import Counter

    groups: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in labels:
        groups[(v.item_id, v.criterion_id)].append(v)
    out = []
    for group in groups.values():
        ranked = Counter((v.decision, v.option) for v in group).most_common()
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            continue
        verdict, option = ranked[0][0]
        out.append(group[0].model_copy(update={"decision": verdict, "option": option,
                                               "judge": "human-majority"}))
    return out
