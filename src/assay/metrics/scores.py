"""Score-level agreement: per-item scores of a judge against per-item reference scores.

Per-item scores come from the one item scorer (:class:`assay.scoring.ItemScorer`) via
:func:`item_scores`; this module never computes a score itself. Given two score maps it reports
Pearson r, Spearman ρ, Kendall τ-b (SciPy), RMSE, MAE and the bias (mean predicted − true;
> 0 means the judge is lenient) with a paired t-test of "bias = 0" (``scipy.stats.ttest_rel``).

Example:
    >>> r = score_agreement({"a": .9, "b": .5, "c": .2}, {"a": .8, "b": .4, "c": .3})
    >>> round(r.bias.value, 4), round(r.mae.value, 4), r.spearman.value
    (0.0333, 0.1, 1.0)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.metrics.agreement_ordinal import pearson, rank_correlation
from assay.metrics.results import Metric, StatTest
from assay.rubric.criterion import Criterion
from assay.verdict import Verdict


class ScoreAgreement(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    pearson: Metric
    spearman: Metric
    kendall: Metric
    rmse: Metric
    mae: Metric
    bias: Metric
    bias_test: StatTest
    partly_labelled: int = 0
    """Items among the ``n`` whose labels cover only some of the criteria the judge answered
    (or tie on some): both scores of such an item use only the criteria both sides have."""


def paired_scores(
    predicted: Mapping[str, float | None], true: Mapping[str, float | None]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Items scored on both sides (sorted ids), with the two score arrays."""
    ids = sorted(
        k for k in predicted.keys() & true.keys()
        if predicted[k] is not None and true[k] is not None
    )
    return (
        ids,
        np.array([predicted[k] for k in ids], float),
        np.array([true[k] for k in ids], float),
    )


def score_agreement(
    predicted: Mapping[str, float | None], true: Mapping[str, float | None]
) -> ScoreAgreement:
    """Agreement of per-item scores over the items both sides scored."""
    from scipy import stats

    _, p, t = paired_scores(predicted, true)
    n = len(p)
    if n == 0:
        none = Metric.undefined("no item scored on both sides")
        return ScoreAgreement(
            n=0, pearson=none, spearman=none, kendall=none, rmse=none, mae=none, bias=none,
            bias_test=StatTest.undefined("paired t-test", "no item scored on both sides"),
        )
    d = p - t
    if n < 2:
        bias_test = StatTest.undefined("paired t-test", "fewer than two items", n)
    elif np.ptp(d) == 0:
        bias_test = StatTest.undefined("paired t-test", "all differences are equal", n)
    else:
        res = stats.ttest_rel(p, t)
        bias_test = StatTest.of("paired t-test", res.statistic, res.pvalue, n, df=n - 1)
    return ScoreAgreement(
        n=n,
        pearson=pearson(p, t),
        spearman=rank_correlation(p, t, "spearman"),
        kendall=rank_correlation(p, t, "kendall"),
        rmse=Metric.of(math.sqrt(float(np.mean(d**2))), n=n),
        mae=Metric.of(float(np.mean(np.abs(d))), n=n),
        bias=Metric.of(float(np.mean(d)), n=n),
        bias_test=bias_test,
    )


def item_scores(
    criteria_by_item: Mapping[str, Sequence[Criterion]],
    verdicts: Iterable[Verdict],
    *,
    formula: str = "autorubric",
    abstention: Any = None,
    only: Mapping[str, Collection[str]] | None = None,
) -> dict[str, float | None]:
    """Each item's score by the one item scorer (:class:`assay.scoring.ItemScorer`).

    Items without a rubric in ``criteria_by_item`` are skipped, and verdicts on criteria an
    item's rubric lacks are left out (an inferred rubric has no multi-choice criteria).
    ``only`` (item → criterion ids) scores each item on those of its criteria alone, as if its
    rubric held no other (an item absent from it is not scored): two sides compared on the
    same criteria.
    ``abstention`` is an ``assay.scoring.Abstention`` (default: the scorer's default). Verdicts
    are grouped by the same rule as every other scorer (:func:`assay.scoring.group_by_item`):
    two verdicts on one criterion of one item are an error, never "the last one wins".
    """
    from assay.scoring import Abstention, ItemScorer, checked_formula, group_by_item

    scorer = ItemScorer(checked_formula(formula),
                        abstention if abstention is not None else Abstention())
    scores: dict[str, float | None] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for item_id, mine in group_by_item(verdicts).items():
            criteria = criteria_by_item.get(item_id)
            if criteria and only is not None:
                kept = only.get(item_id, ())
                criteria = [c for c in criteria if c.id in kept]
            if criteria:
                scores[item_id] = scorer.score(criteria, mine).score
    return scores
