"""Validation reports as seed 002 §8 computes them, with Assay's metric functions.

* :func:`faithfulness_validity` (§8.1, Figure 5 / Table 1): CF and RAGAS faithfulness (RF) as
  predictors of human perceived faithfulness (PF): ROC AUC, Pearson, Spearman, Kendall τ-b;
  for the judge's scores and, where the items carry them, the human-applied CF / RF.
* :func:`averages` (§8.3, Table 3): mean CF %, CR %, RA % per judge and for the human labels,
  plus refusal accuracy (refused exactly when refusing was expected) and the RAGAS baselines.
* :func:`judge_vs_human`: per-item agreement the paper lacks (CR, RA: accuracy, κ; CF:
  Pearson, MAE).
* :func:`across_judges`: agreement between judges (CR, RA: Fleiss κ and percent agreement;
  CF: ICC(2,1) and Krippendorff's interval α).
* :func:`by_hazard`: the triad and Figure 11 diagnoses per §5 operating context.
* :func:`predictive`: a saved classifier's performance on a labelled run (§8.2).
* :func:`coverage`: which items each run graded; :func:`rag_report` computes every figure,
  the judges' and the human ones alike, on the items that the file and every run share, and
  refuses a run that shares none.

Example:
    >>> from assay.rag.items import RagItem
    >>> items = [RagItem.model_validate({"id": str(i), "scope": "in_scope", "question": "q",
    ...          "answer": "a", "labels": {"pf": i % 2 == 0, "cf": 1.0 - 0.5 * (i % 2)}})
    ...          for i in range(4)]
    >>> [(r.metric, r.source, r.auc.value) for r in faithfulness_validity(items, [])]
    [('CF', 'human', 1.0)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from assay.errors import InputError, Issue
from assay.metrics.agreement_binary import BinaryAgreement, binary_agreement
from assay.metrics.agreement_ordinal import pearson, rank_correlation
from assay.metrics.discrimination import roc_auc
from assay.metrics.reliability import fleiss_kappa, icc, krippendorff_alpha, percent_agreement
from assay.metrics.results import Metric
from assay.metrics.uncertainty import bootstrap_ci, proportion
from assay.rag.classify import Performance, TrainedModel, performance
from assay.rag.grading import RagGrade, TurnMetrics
from assay.rag.items import HAZARD_CONTEXTS, RagItem


class CorrelationRow(BaseModel):
    metric: str
    source: str
    n: int
    auc: Metric
    pearson: Metric
    spearman: Metric
    kendall: Metric


def _correlations(metric: str, source: str, scores: list[float], pf: list[bool]) -> CorrelationRow:
    as_float = [float(p) for p in pf]
    return CorrelationRow(metric=metric, source=source, n=len(scores), auc=roc_auc(pf, scores),
                          pearson=pearson(scores, as_float),
                          spearman=rank_correlation(scores, as_float, "spearman"),
                          kendall=rank_correlation(scores, as_float, "kendall"))


def faithfulness_validity(items: Sequence[RagItem], grades: Sequence[RagGrade],
                          judge: str = "judge") -> list[CorrelationRow]:
    """CF vs RF against PF, for every source that has at least two PF-labelled items."""
    pf = {i.id: i.labels.pf for i in items if i.labels.pf is not None}
    rows = []
    sources = [(judge, {g.id: g.cf for g in grades}, {g.id: g.ragas_faithfulness for g in grades}),
               ("human", {i.id: i.labels.cf for i in items}, {i.id: i.labels.rf for i in items})]
    for source, cf, rf in sources:
        for metric, scores in (("CF", cf), ("RF", rf)):
            known = {k: v for k in pf if (v := scores.get(k)) is not None}
            if len(known) >= 2:
                rows.append(_correlations(metric, source, list(known.values()),
                                          [pf[k] for k in known]))
    return rows


class Averages(BaseModel):
    """Table 3's row for one rater: percentages over the graded turns (one per item unless
    graded with ``--turns all``); ``n`` items, ``turns`` turns, each metric with its own n."""

    rater: str
    n: int
    turns: int | None = None
    cf_pct: Metric
    cr_pct: Metric
    ra_pct: Metric
    refusal_accuracy: Metric | None = None
    ragas_faithfulness_pct: Metric | None = None
    ragas_context_relevance_pct: Metric | None = None


def _pct(values: Sequence[float | None], seed: int) -> Metric:
    kept = [100.0 * v for v in values if v is not None]
    return bootstrap_ci(kept, seed=seed) if kept else Metric.undefined("no defined value")


def _rate(values: Sequence[bool | None]) -> Metric:
    kept = [v for v in values if v is not None]
    m = proportion(sum(kept), len(kept))
    if m.value is None:
        return m
    ci = m.ci.model_copy(update={"low": 100 * m.ci.low, "high": 100 * m.ci.high}) if m.ci else None
    return Metric(value=100 * m.value, n=m.n, ci=ci)


def graded_turns(grades: Sequence[RagGrade]) -> list[TurnMetrics]:
    """Every graded turn of a run (a grade without its turns stands for its one turn)."""
    out: list[TurnMetrics] = []
    for g in grades:
        out.extend(g.turns or [g])
    return out


def averages(grades: Sequence[RagGrade], rater: str, *, seed: int = 0) -> Averages:
    """Mean CF % (bootstrap CI), CR % and RA % (Wilson CIs) over every graded turn of a run."""
    turns = graded_turns(grades)
    return Averages(
        rater=rater, n=len(grades), turns=len(turns), cf_pct=_pct([t.cf for t in turns], seed),
        cr_pct=_rate([t.cr for t in turns]), ra_pct=_rate([t.refused for t in turns]),
        refusal_accuracy=_rate([t.refusal_correct for t in turns]),
        ragas_faithfulness_pct=_pct([t.ragas_faithfulness for t in turns], seed),
        ragas_context_relevance_pct=_pct([t.ragas_context_relevance for t in turns], seed))


def human_averages(items: Sequence[RagItem], *, seed: int = 0) -> Averages | None:
    """The same row from the items' human labels (None when no item has CF, CR or RA)."""
    labelled = [i for i in items if {i.labels.cf, i.labels.cr, i.labels.ra} != {None}]
    if not labelled:
        return None
    return Averages(rater="human", n=len(labelled),
                    cf_pct=_pct([i.labels.cf for i in labelled], seed),
                    cr_pct=_rate([i.labels.cr for i in labelled]),
                    ra_pct=_rate([i.labels.ra for i in labelled]),
                    ragas_faithfulness_pct=_pct([i.labels.rf for i in labelled], seed))


class JudgeVsHuman(BaseModel):
    judge: str
    cr: BinaryAgreement
    ra: BinaryAgreement
    cf_pearson: Metric
    cf_mae: Metric


def judge_vs_human(items: Sequence[RagItem], grades: Sequence[RagGrade], judge: str) -> JudgeVsHuman:
    """Per-item agreement of a judge's CR, RA and CF with the human labels."""
    by_id = {g.id: g for g in grades}
    cr = [(i.labels.cr, by_id[i.id].cr) for i in items if i.id in by_id and i.labels.cr is not None]
    ra = [(i.labels.ra, by_id[i.id].refused) for i in items
          if i.id in by_id and i.labels.ra is not None]
    cf = [(human, judged) for i in items
          if i.id in by_id and (human := i.labels.cf) is not None
          and (judged := by_id[i.id].cf) is not None]
    human_cf, judge_cf = [c[0] for c in cf], [c[1] for c in cf]
    mae = (Metric.of(float(np.mean(np.abs(np.subtract(judge_cf, human_cf)))), n=len(cf))
           if cf else Metric.undefined("no item with both CF values"))
    return JudgeVsHuman(judge=judge, cr=binary_agreement([a for a, _ in cr], [b for _, b in cr]),
                        ra=binary_agreement([a for a, _ in ra], [b for _, b in ra]),
                        cf_pearson=pearson(judge_cf, human_cf), cf_mae=mae)


class AcrossJudges(BaseModel):
    judges: list[str]
    n: int
    cr_fleiss: Metric
    cr_percent: Metric
    ra_fleiss: Metric
    ra_percent: Metric
    cf_icc: Metric
    cf_alpha: Metric


def across_judges(runs: Mapping[str, Sequence[RagGrade]]) -> AcrossJudges:
    """Agreement between two or more judges on the items they all graded."""
    names = list(runs)
    maps = [{g.id: g for g in runs[n]} for n in names]
    shared = [k for k in maps[0] if all(k in m for m in maps[1:])]
    cr = [[m[k].cr for m in maps] for k in shared]
    ra = [[m[k].refused for m in maps] for k in shared]
    cf = [[m[k].cf for m in maps] for k in shared]
    complete_cf = [[v for v in row if v is not None] for row in cf if None not in row]
    return AcrossJudges(
        judges=names, n=len(shared), cr_fleiss=fleiss_kappa(cr), cr_percent=percent_agreement(cr),
        ra_fleiss=fleiss_kappa(ra), ra_percent=percent_agreement(ra),
        cf_icc=icc(complete_cf)["ICC(2,1)"] if complete_cf else Metric.undefined("no CF"),
        cf_alpha=krippendorff_alpha([list(col) for col in zip(*cf)], level="interval")
        if cf else Metric.undefined("no CF"))


class HazardRow(BaseModel):
    hazard: str
    description: str
    n: int
    cf_mean: float | None
    cr_rate: float
    refusal_rate: float
    refusal_accuracy: float
    diagnoses: dict[str, int]


def by_hazard(grades: Sequence[RagGrade]) -> list[HazardRow]:
    """The triad and diagnoses per §5 operating context (items without one: "unspecified"),
    over every graded turn; ``n`` counts turns."""
    groups: dict[str, list[RagGrade]] = {}
    for g in grades:
        groups.setdefault(g.hazard or "unspecified", []).append(g)
    order = [h for h in HAZARD_CONTEXTS if h in groups] + (
        ["unspecified"] if "unspecified" in groups else [])
    rows = []
    for hazard in order:
        gs = graded_turns(groups[hazard])
        cfs = [g.cf for g in gs if g.cf is not None]
        rows.append(HazardRow(
            hazard=hazard, description=HAZARD_CONTEXTS.get(hazard, "no hazard context given"),
            n=len(gs), cf_mean=float(np.mean(cfs)) if cfs else None,
            cr_rate=float(np.mean([g.cr for g in gs])),
            refusal_rate=float(np.mean([g.refused for g in gs])),
            refusal_accuracy=float(np.mean([g.refusal_correct for g in gs])),
            diagnoses=dict(Counter(d for g in gs for d in g.diagnosis))))
    return rows


class Predictive(BaseModel):
    target: str
    model: str
    performance: Performance
    unscored: int


def predictive(model: TrainedModel, items: Sequence[RagItem], grades: Sequence[RagGrade], *,
               seed: int = 0) -> Predictive | None:
    """How well a saved classifier's probabilities predict the items' labels on this run."""
    target = model.report.target
    labels = {i.id: getattr(i.labels, target) for i in items}
    probs = model.probabilities(grades)
    pairs = [(int(labels[k]), p) for k, p in probs.items()
             if p is not None and labels.get(k) is not None]
    if not pairs:
        return None
    return Predictive(target=target, model=model.report.chosen,
                      performance=performance([a for a, _ in pairs], [b for _, b in pairs],
                                              seed=seed),
                      unscored=sum(p is None for p in probs.values()))


class Coverage(BaseModel):
    """How one run's grades line up with the items file (ids compared)."""

    run: str
    items: int
    graded: int
    shared: int
    not_graded: int
    """Items the run has no grade for (failed or never graded): left out of every figure."""
    not_items: int
    """Grades whose id is no item of the file: left out of every figure."""


def coverage(items: Sequence[RagItem], runs: Mapping[str, Sequence[RagGrade]]) -> list[Coverage]:
    """Per run, how many of its grades match the items' ids.

    >>> from assay.rag.items import RagItem
    >>> item = RagItem.model_validate({"id": "a", "scope": "in_scope", "question": "q",
    ...                                "answer": "a"})
    >>> coverage([item], {"j": []})[0].not_graded
    1
    """
    ids = {i.id for i in items}
    out = []
    for name, grades in runs.items():
        graded = {g.id for g in grades}
        out.append(Coverage(run=name, items=len(ids), graded=len(graded),
                            shared=len(graded & ids), not_graded=len(ids - graded),
                            not_items=len(graded - ids)))
    return out


class RagReport(BaseModel):
    items_compared: int
    """Items graded by every run (and in the items file): every figure is over these."""
    coverage: list[Coverage]
    averages: list[Averages]
    faithfulness_validity: list[CorrelationRow]
    judge_vs_human: list[JudgeVsHuman]
    across_judges: AcrossJudges | None
    by_hazard: dict[str, list[HazardRow]]
    predictive: list[Predictive]


def rag_report(items: Sequence[RagItem], runs: Mapping[str, Sequence[RagGrade]], *,
               models: Sequence[TrainedModel] = (), seed: int = 0,
               sources: Mapping[str, str] | None = None) -> RagReport:
    """Every §8 figure the data supports (runs by judge name; human labels from ``items``).

    The figures, judges' and human alike, are over the items that the file and every run share
    (:attr:`RagReport.coverage` counts what was left out). A run sharing no id with the items is
    an :class:`InputError` naming it (by its ``sources`` path when given).
    """
    found = coverage(items, runs)
    disjoint = [c for c in found if c.shared == 0]
    if disjoint:
        raise InputError([Issue((sources or {}).get(c.run, c.run), None, "id",
                                f"none of the run's {c.graded} graded ids is among the "
                                f"{c.items} item ids: grades of other items?") for c in disjoint])
    common = {i.id for i in items}
    for grades in runs.values():
        common &= {g.id for g in grades}
    items = [i for i in items if i.id in common]
    runs = {name: [g for g in grades if g.id in common] for name, grades in runs.items()}
    rows = [averages(g, name, seed=seed) for name, g in runs.items()]
    human = human_averages(items, seed=seed)
    validity: list[CorrelationRow] = []
    for n, (name, grades) in enumerate(runs.items()):
        rows_found = faithfulness_validity(items, grades, judge=name)
        validity += [r for r in rows_found if n == 0 or r.source != "human"]
    has_human = any({i.labels.cf, i.labels.cr, i.labels.ra} != {None} for i in items)
    first = next(iter(runs.values()), [])
    return RagReport(
        items_compared=len(common), coverage=found,
        averages=rows + ([human] if human else []), faithfulness_validity=validity,
        judge_vs_human=[judge_vs_human(items, g, name) for name, g in runs.items()]
        if has_human else [],
        across_judges=across_judges(runs) if len(runs) >= 2 else None,
        by_hazard={name: by_hazard(g) for name, g in runs.items()},
        predictive=[p for m in models if (p := predictive(m, items, first, seed=seed))])
