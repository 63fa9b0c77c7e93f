"""The two end-to-end analyses behind ``assay agreement`` and ``assay compare``.

Both take verdicts (and labels) already read, plus the rubrics that say each criterion's kind,
options and weight; per-item scores always come from the scoring core.

Example:
    >>> from assay.verdict import Verdict
    >>> judge = [Verdict(item_id=i, criterion_id=c, decision=v, judge="j")
    ...          for i, c, v in [("a", "x", "MET"), ("a", "y", "UNMET"), ("b", "x", "MET"),
    ...                          ("b", "y", "MET")]]
    >>> human = [v.model_copy(update={"judge": "dr"}) for v in judge]
    >>> s = agreement_summary(judge, human)
    >>> s.reports[0].pooled.accuracy.value, s.reports[0].scores.mae.value
    (1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.metrics.agreement import AgreementReport, agreement
from assay.metrics.compare import (
    N_PERMUTATIONS,
    ComparisonReport,
    compare_scores,
    compare_verdicts,
)
from assay.metrics.inter_judge import InterJudgeReliability, inter_judge
from assay.metrics.label_sources import StrayLabels, stray_labels
from assay.metrics.scores import item_scores
from assay.metrics.sources import Rubrics, by_judge, inferred_rubrics
from assay.verdict import Verdict


class AgreementSummary(BaseModel):
    """Agreement of every judge with the labels, and reliability among judges (if several)."""

    model_config = ConfigDict(frozen=True)

    formula: str
    reports: list[AgreementReport]
    inter_judge: InterJudgeReliability | None = None
    between_reviewers: InterJudgeReliability | None = None
    """Reliability among the human raters, when several labelled the same verdicts."""
    stray_labels: StrayLabels | None = None
    """The labels on items or criteria the verdicts' run does not have (None: no labels)."""


def _rubrics(rubrics: Rubrics | None, *sources: Sequence[Verdict]) -> Rubrics:
    if rubrics is not None:
        return rubrics
    return inferred_rubrics(v for source in sources for v in source)


def agreement_summary(
    verdicts: Sequence[Verdict],
    labels: Sequence[Verdict],
    rubrics: Rubrics | None = None,
    *,
    formula: str = "autorubric",
    abstention: Any = None,
    seed: int = 0,
    n_resamples: int = 1000,
    min_units: int = 1,
) -> AgreementSummary:
    """Per-judge agreement with ``labels`` (criterion, axis, pooled, score level) and, with
    several judges, their inter-judge reliability (per criterion for the criteria rated on
    ``min_units`` units or more: see :func:`~assay.metrics.inter_judge.inter_judge`). Without
    ``rubrics``, criteria are inferred (binary with weight 1, or nominal) and scores are pass
    rates. CIs: a seeded bootstrap over items (``seed``, ``n_resamples``; see
    :mod:`assay.metrics.agreement_ci`).
    """
    score, lookup = _score_and_lookup(rubrics, [*verdicts, *labels], formula, abstention)
    reports = agreement(verdicts, labels, lookup, score_items=score, seed=seed,
                        n_resamples=n_resamples)
    reliability = reviewers = None
    if len(by_judge(verdicts)) > 1:
        reliability = _between_judges(verdicts, lookup, score, seed=seed, n_resamples=n_resamples,
                                      min_units=min_units)
    if len(by_judge(labels)) > 1:  # several humans: how far they agree among themselves
        reviewers = _between_judges(labels, lookup, score, seed=seed, n_resamples=n_resamples)
    return AgreementSummary(formula=formula, reports=reports, inter_judge=reliability,
                            between_reviewers=reviewers,
                            stray_labels=stray_labels(labels, verdicts, rubrics))


def reliability_summary(
    verdicts: Sequence[Verdict],
    rubrics: Rubrics | None = None,
    *,
    formula: str = "autorubric",
    abstention: Any = None,
    seed: int = 0,
    n_resamples: int = 1000,
) -> AgreementSummary:
    """Reliability between the judges of ``verdicts`` alone, no human label needed: α, Fleiss'
    κ and percent agreement pooled and per criterion, and the ICCs and interval α of their
    per-item scores, each with a seeded bootstrap CI over items.

    >>> from assay.verdict import Verdict
    >>> vs = [Verdict(item_id=i, criterion_id="c", decision=v, judge=j)
    ...       for j, answers in {"a": "MMUU", "b": "MMUM"}.items()
    ...       for i, v in zip("wxyz", ["MET" if x == "M" else "UNMET" for x in answers])]
    >>> s = reliability_summary(vs)
    >>> s.reports, s.inter_judge.percent_agreement.value
    ([], 0.75)
    """
    score, lookup = _score_and_lookup(rubrics, verdicts, formula, abstention)
    return AgreementSummary(formula=formula, reports=[], inter_judge=_between_judges(
        verdicts, lookup, score, seed=seed, n_resamples=n_resamples))


def _score_and_lookup(rubrics: Rubrics | None, verdicts: Sequence[Verdict], formula: str,
                      abstention: Any) -> tuple[Any, Any]:
    """The per-item scorer of ``verdicts`` (rubrics inferred when none are given) and, with
    ``rubrics``, their criterion lookup (``{}`` without: kinds are inferred)."""
    known = _rubrics(rubrics, verdicts)
    score = partial(item_scores, known.criteria_by_item({v.item_id for v in verdicts}),
                    formula=formula, abstention=abstention)
    return score, (known.lookup(verdicts) if rubrics is not None else {})


def _between_judges(verdicts: Sequence[Verdict], lookup: Any, score: Any, *, seed: int,
                    n_resamples: int, min_units: int = 1) -> InterJudgeReliability:
    scores = {j: score(vs) for j, vs in by_judge(verdicts).items()}
    return inter_judge(verdicts, lookup, item_scores=scores, seed=seed, n_resamples=n_resamples,
                       min_units=min_units)


def comparison(
    verdicts_a: Sequence[Verdict],
    verdicts_b: Sequence[Verdict],
    rubrics: Rubrics | None = None,
    *,
    labels: Sequence[Verdict] | None = None,
    formula: str = "autorubric",
    abstention: Any = None,
    n_resamples: int = 1000,
    n_permutations: int = N_PERMUTATIONS,
    seed: int = 0,
    compared: str = "verdicts",
) -> ComparisonReport:
    """Paired tests of two verdict sets over the same items (see :mod:`assay.metrics.compare`);
    ``compared`` says what the verdicts are (e.g. a run's aggregated verdicts)."""
    known = _rubrics(rubrics, verdicts_a, verdicts_b)
    item_ids = {v.item_id for v in [*verdicts_a, *verdicts_b]}
    score = partial(item_scores, known.criteria_by_item(item_ids), formula=formula,
                    abstention=abstention)
    return paired_comparison(score(verdicts_a), score(verdicts_b), verdicts_a, verdicts_b,
                             labels=labels, formula=formula, n_resamples=n_resamples,
                             n_permutations=n_permutations, seed=seed, compared=compared)


def paired_comparison(
    scores_a: Mapping[str, float | None],
    scores_b: Mapping[str, float | None],
    verdicts_a: Iterable[Verdict],
    verdicts_b: Iterable[Verdict],
    *,
    labels: Sequence[Verdict] | None = None,
    formula: str = "autorubric",
    n_resamples: int = 1000,
    n_permutations: int = N_PERMUTATIONS,
    seed: int = 0,
    compared: str = "verdicts",
) -> ComparisonReport:
    """:func:`comparison` of two sides already scored (item → score under ``formula``): the
    paired score tests and McNemar's test on their verdicts."""
    return ComparisonReport(
        scores=compare_scores(scores_a, scores_b, n_resamples=n_resamples,
                              n_permutations=n_permutations, seed=seed),
        verdicts=compare_verdicts(verdicts_a, verdicts_b, labels),
        formula=formula,
        compared=compared,
    )
