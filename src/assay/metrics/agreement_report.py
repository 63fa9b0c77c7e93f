"""Agreement of one judge with human labels, per criterion, per axis and pooled: the report
and its point figures (:mod:`assay.metrics.agreement` pairs the verdicts with the labels and
adds the bootstrap CIs of :mod:`assay.metrics.agreement_ci`).

Each criterion gets the metrics of its kind (binary, ordinal, nominal: see the
``agreement_*`` modules) over the pairs where neither side is N/A, plus N/A diagnostics.
Pooled figures (over all criteria, or all criteria of one axis) are:

- ``accuracy``: exact agreement, micro-averaged over every scored pair of every kind;
- ``binary``: the binary metrics over all binary pairs pooled (Cohen's κ over MET/UNMET);
- ``mean_kappa``: the macro mean over criteria of κ (quadratic-weighted for ordinal
  criteria, unweighted otherwise), over the criteria where κ is defined (Autorubric's
  "mean κ");
- ``na``: N/A diagnostics over all pairs.

Example:
    >>> from assay.metrics.labels import CriterionInfo, LabelPair
    >>> info = CriterionInfo.binary("c")
    >>> pairs = [LabelPair(i, info, t, p) for i, t, p in
    ...          [("a", True, True), ("b", False, False), ("c", False, True)]]
    >>> [c] = [criterion_agreement(pairs)]
    >>> c.n, round(c.accuracy.value, 3)
    (3, 0.667)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from assay.metrics.agreement_binary import BinaryAgreement, binary_agreement
from assay.metrics.agreement_na import NADiagnostics, na_diagnostics
from assay.metrics.agreement_nominal import NominalAgreement, nominal_agreement
from assay.metrics.agreement_ordinal import OrdinalAgreement, ordinal_agreement
from assay.metrics.labels import AlignedPairs, LabelPair, as_flag, as_label
from assay.metrics.results import Metric
from assay.metrics.scores import ScoreAgreement
from assay.rubric.criterion import CriterionKind


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
