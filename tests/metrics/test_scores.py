"""Score-level agreement, with per-item scores from the scoring core."""

from __future__ import annotations

import numpy as np
from scipy import stats

from assay.metrics.scores import item_scores, score_agreement
from assay.rubric import Criterion
from assay.scoring import score_rubric
from assay.verdict import Verdict

PRED = {"a": 0.9, "b": 0.4, "c": 0.7, "d": 0.2, "e": 0.6}
TRUE = {"a": 0.8, "b": 0.5, "c": 0.5, "d": 0.1, "e": 0.6}


def test_bias_is_mean_predicted_minus_true_with_a_paired_t_test():
    """Cross-check: t = mean(d) / (sd(d)/√n) by hand, p from the t distribution."""
    d = np.array([PRED[k] - TRUE[k] for k in sorted(PRED)])
    r = score_agreement(PRED, TRUE)
    t = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    assert abs(r.bias.value - d.mean()) < 1e-12
    assert abs(r.bias_test.statistic - t) < 1e-9
    assert abs(r.bias_test.p_value - 2 * stats.t.sf(abs(t), len(d) - 1)) < 1e-9


def test_rmse_mae_and_correlations_match_numpy_and_scipy():
    keys = sorted(PRED)
    p, t = np.array([PRED[k] for k in keys]), np.array([TRUE[k] for k in keys])
    r = score_agreement(PRED, TRUE)
    assert abs(r.rmse.value - np.sqrt(np.mean((p - t) ** 2))) < 1e-12
    assert abs(r.mae.value - np.mean(np.abs(p - t))) < 1e-12
    assert abs(r.pearson.value - np.corrcoef(p, t)[0, 1]) < 1e-12
    assert abs(r.kendall.value - stats.kendalltau(p, t).statistic) < 1e-12


def test_items_missing_or_unscored_on_one_side_are_left_out():
    r = score_agreement({"a": 0.5, "b": None, "c": 0.2}, {"a": 0.4, "b": 0.3})
    assert r.n == 1 and r.pearson.value is None and r.bias_test.p_value is None


def test_item_scores_come_from_the_scoring_core():
    criteria = [Criterion(id="x", text="x", weight=3), Criterion(id="y", text="y", weight=-1),
                Criterion(id="z", text="z", weight=1)]
    verdicts = [Verdict(item_id="q", criterion_id=c, decision=v)
                for c, v in [("x", "MET"), ("y", "MET"), ("z", "UNMET")]]
    expected = score_rubric(criteria, {v.criterion_id: v for v in verdicts}).score
    assert item_scores({"q": criteria}, verdicts) == {"q": expected}


def test_item_scores_refuse_two_verdicts_on_one_criterion_like_every_scorer():
    import pytest

    from assay.errors import InputError
    from assay.metrics.scores import item_scores
    from assay.rubric import Criterion
    from assay.verdict import Verdict

    criteria = {"q1": [Criterion(id="c", text="Says c.")]}
    twice = [Verdict(item_id="q1", criterion_id="c", decision="MET"),
             Verdict(item_id="q1", criterion_id="c", decision="UNMET")]
    with pytest.raises(InputError, match="more than one verdict for this criterion"):
        item_scores(criteria, twice)
