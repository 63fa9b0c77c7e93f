"""Agreement of a judge with human labels: per criterion, per axis, pooled, per judge.

:func:`agreement` pairs each judge's verdicts with the labels' majority, computes the figures
of :mod:`assay.metrics.agreement_report` (what each figure is) and adds their bootstrap CIs
(:mod:`assay.metrics.agreement_ci`). The modules import one way: this one uses the two others,
``agreement_ci`` uses ``agreement_report``.

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

from assay.metrics.agreement_ci import report_with_cis, scores_with_cis
from assay.metrics.agreement_report import (
    AgreementReport,
    CriterionAgreement,
    PooledAgreement,
    agreement_report,
)
from assay.metrics.labels import CriteriaLookup, align
from assay.metrics.scores import paired_scores, score_agreement
from assay.verdict import Verdict

__all__ = ["AgreementReport", "CriterionAgreement", "PooledAgreement", "agreement",
           "majority_verdicts", "same_criteria_scores"]


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
