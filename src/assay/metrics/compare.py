"""Paired comparison of two sets of verdicts on the same items (two judges, rubrics, runs).

Score level (per-item scores from the scoring core, items scored in both): mean of each, the
mean difference A − B with a seeded bootstrap CI, Wilcoxon signed-rank, a paired permutation
test and Cohen's d_z. Criterion level ((item, criterion) pairs with a MET/UNMET verdict in
both): McNemar's exact test, on correctness against human labels when labels are given,
otherwise on MET itself (do the two sets call MET equally often?).

Example:
    >>> r = compare_scores({"a": .9, "b": .7, "c": .6}, {"a": .5, "b": .6, "c": .6})
    >>> r.n_items, round(r.mean_difference.value, 4)
    (3, 0.1667)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.metrics.results import Metric, StatTest
from assay.metrics.scores import paired_scores
from assay.metrics.significance import (
    cohens_d,
    mcnemar_exact,
    paired_permutation,
    wilcoxon_signed_rank,
)
from assay.metrics.uncertainty import bootstrap_ci
from assay.verdict import Decision, Verdict

N_PERMUTATIONS = 9999
"""Resamples of the paired permutation test, for every command that shows one (``assay
compare``, ``assay report``): the same pair of runs never shows two p-values."""


class ScoreComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    n_items: int
    mean_a: Metric
    mean_b: Metric
    mean_difference: Metric  # A − B, with a paired bootstrap CI
    wilcoxon: StatTest
    permutation: StatTest
    cohens_d: Metric


class VerdictComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    n_pairs: int
    basis: str  # "correctness vs labels" or "MET rate"
    rate_a: Metric
    rate_b: Metric
    mcnemar: StatTest


class ComparisonReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    scores: ScoreComparison
    verdicts: VerdictComparison
    formula: str = "autorubric"
    compared: str = "verdicts"  # e.g. "aggregated verdicts (binary=majority,...)"


def _difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def compare_scores(
    scores_a: Mapping[str, float | None],
    scores_b: Mapping[str, float | None],
    *,
    n_resamples: int = 1000,
    n_permutations: int = N_PERMUTATIONS,
    seed: int = 0,
) -> ScoreComparison:
    """Paired tests on the items both score maps scored."""
    _, a, b = paired_scores(scores_a, scores_b)
    n = len(a)
    none = Metric.undefined("no item scored in both")
    return ScoreComparison(
        n_items=n,
        mean_a=Metric.of(float(a.mean()), n=n) if n else none,
        mean_b=Metric.of(float(b.mean()), n=n) if n else none,
        mean_difference=bootstrap_ci((a, b), _difference, paired=True,
                                     n_resamples=n_resamples, seed=seed),
        wilcoxon=wilcoxon_signed_rank(a, b),
        permutation=paired_permutation(a, b, n_resamples=n_permutations, seed=seed),
        cohens_d=cohens_d(a, b, paired=True),
    )


def _binary(verdicts: Iterable[Verdict]) -> dict[tuple[str, str], bool]:
    return {
        (v.item_id, v.criterion_id): v.decision is Decision.MET
        for v in verdicts
        if v.decision in (Decision.MET, Decision.UNMET)
    }


def compare_verdicts(
    verdicts_a: Iterable[Verdict],
    verdicts_b: Iterable[Verdict],
    labels: Iterable[Verdict] | None = None,
) -> VerdictComparison:
    """McNemar's exact test on the binary verdicts both sets gave (see module docstring)."""
    a, b = _binary(verdicts_a), _binary(verdicts_b)
    keys = sorted(a.keys() & b.keys())
    if labels is not None:
        truth = _binary(labels)
        keys = [k for k in keys if k in truth]
        xa = [a[k] == truth[k] for k in keys]
        xb = [b[k] == truth[k] for k in keys]
        basis = "correctness vs labels"
    else:
        xa, xb = [a[k] for k in keys], [b[k] for k in keys]
        basis = "MET rate"
    n = len(keys)
    none = Metric.undefined("no binary verdict in both sets")
    return VerdictComparison(
        n_pairs=n,
        basis=basis,
        rate_a=Metric.of(sum(xa) / n, n=n) if n else none,
        rate_b=Metric.of(sum(xb) / n, n=n) if n else none,
        mcnemar=mcnemar_exact(xa, xb),
    )
