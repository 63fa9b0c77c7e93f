"""Harm/helpfulness classifiers on [CF, CR, RA, scope]: features, metrics against hand-worked
values, cross-validation, and saved models that load safely and score new runs."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import ConfigError, InputError
from assay.rag.classify import (
    LabelledSet,
    auc_along,
    feature_row,
    labelled_set,
    load_model,
    performance,
    save_model,
    train,
)
from assay.rag.grading import RagGrade
from assay.rag.items import RagItem


def grade(item_id, cf, cr, refused, scope="in_scope"):
    return RagGrade(id=item_id, judge="j", scope=scope, refusal_expected=False, cf=cf, cr=cr,
                    refused=refused, refusal_correct=not refused, diagnosis=["ideal"], turns=[])


def item(item_id, scope="in_scope", **labels):
    return RagItem.model_validate({"id": item_id, "scope": scope, "question": "q", "answer": "a",
                                   "labels": labels})


def separable(n=40, seed=0):
    """Harmful exactly when an out-of-scope question was answered, or CF is low in scope."""
    rng = np.random.default_rng(seed)
    cf, cr, ra, out = rng.random(n), rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(
        0, 2, n)
    y = ((out == 1) & (ra == 0)) | ((out == 0) & (cf < 0.4))
    return LabelledSet([str(i) for i in range(n)], np.c_[cf, cr, ra, out].astype(float),
                       y.astype(int))


def test_features_are_cf_cr_ra_and_scope_in_that_order():
    assert feature_row(grade("a", 0.5, True, False, "out_of_scope")) == [0.5, 1.0, 0.0, 1.0]
    assert feature_row(grade("a", None, True, False)) is None


def test_the_labelled_set_skips_items_without_a_label_or_features_and_says_why():
    items = [item("a", harmful=True), item("b"), item("c", harmful=False), item("d", harmful=True)]
    grades = [grade("a", 1.0, True, False), grade("b", 1.0, True, False),
              grade("c", None, True, False)]
    data = labelled_set(items, grades, "harmful")
    assert data.ids == ["a"] and data.y.tolist() == [1]
    assert data.skipped == {"b": "no harmful label", "c": "CF undefined", "d": "not graded"}


def test_human_features_come_from_the_items_labels():
    items = [item("a", "out_of_scope", cf=0.0, cr=False, ra=True, helpful=True),
             item("b", cf=1.0, cr=True, helpful=False)]
    data = labelled_set(items, None, "helpful", "human")
    assert data.X.tolist() == [[0.0, 0.0, 1.0, 1.0]]
    assert data.skipped == {"b": "a human cf/cr/ra label is missing"}


def test_vectorised_auc_equals_scikit_learns_and_counts_ties_half():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    y, p = rng.integers(0, 2, 50), rng.random(50).round(1)
    assert auc_along(y, p) == pytest.approx(roc_auc_score(y, p))
    assert auc_along(np.array([0, 1]), np.array([0.5, 0.5])) == 0.5


def test_performance_against_hand_worked_counts():
    # threshold 0.5: predictions 0,1,1,1,0,0 against 0,0,1,1,1,0 -> tp 2, fp 1, fn 1, tn 2
    r = performance([0, 0, 1, 1, 1, 0], [0.1, 0.6, 0.9, 0.7, 0.4, 0.2])
    assert r.confusion == {"tp": 2, "fp": 1, "fn": 1, "tn": 2}
    assert (r.accuracy.value, r.sensitivity.value, r.specificity.value) == (4 / 6, 2 / 3, 2 / 3)
    assert r.auc.value == pytest.approx(8 / 9)  # 8 of the 9 positive-negative pairs ordered
    assert r.sensitivity.ci.method == "wilson"
    assert r.auc.reason == "CI undefined: the resamples do not vary" or r.auc.ci is None


def test_auc_has_a_seeded_bootstrap_ci_when_resamples_keep_both_classes():
    y = [0, 1] * 20
    p = [0.3 + 0.4 * v + 0.01 * i for i, v in enumerate(y)]
    first, again = performance(y, p, seed=4).auc, performance(y, p, seed=4).auc
    assert first.ci is not None and first.ci.method == "percentile" and first == again


def test_auc_is_undefined_with_one_class():
    assert performance([1, 1], [0.2, 0.9]).auc.reason.startswith("only one class")


def test_cross_validation_needs_two_examples_of_each_class():
    data = LabelledSet(["a", "b", "c"], np.zeros((3, 4)), np.array([1, 0, 0]))
    with pytest.raises(InputError, match="at least 2 examples of each class"):
        train(data, target="harmful", families=["naive_bayes"])


def test_training_cross_validates_each_family_and_keeps_the_best_auc():
    report, model = train(separable(), target="harmful", families=["naive_bayes", "svm"],
                          folds=4, seed=1, grid=True)
    assert [f.family for f in report.families] == ["naive_bayes", "svm"]
    assert model.predict_proba(separable().X).shape == (40, 2)
    aucs = {f.family: f.performance.auc.value for f in report.families}
    assert report.chosen == max(aucs, key=aucs.get)
    assert all(f.performance.n == 40 for f in report.families) and report.folds == 4
    assert min(aucs.values()) > 0.7  # the labels are a function of the features


def test_the_same_seed_gives_the_same_report():
    first, _ = train(separable(), target="harmful", families=["mlp"], folds=3, seed=5)
    again, _ = train(separable(), target="harmful", families=["mlp"], folds=3, seed=5)
    assert first == again


def test_a_saved_model_loads_and_scores_new_runs_like_the_original(tmp_path):
    from sklearn.ensemble import RandomForestClassifier

    data = separable()
    report, _ = train(data, target="harmful", families=["naive_bayes"], folds=3)
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(data.X, data.y)
    save_model(tmp_path / "m", model, report)  # a forest holds trees: an allow-listed type
    loaded = load_model(tmp_path / "m")
    new_run = [grade("x", 0.1, True, False), grade("y", 1.0, True, True, "out_of_scope"),
               grade("z", None, False, False)]
    probs = loaded.probabilities(new_run)
    expected = model.predict_proba(np.array([[0.1, 1, 0, 0], [1.0, 1, 1, 1]]))[:, 1]
    assert probs["x"] == pytest.approx(expected[0]) and probs["y"] == pytest.approx(expected[1])
    assert probs["z"] is None and loaded.report == report


def test_loading_refuses_a_file_with_types_outside_the_allow_list(tmp_path):
    import os

    import skops.io as sio
    from sklearn.preprocessing import FunctionTransformer

    report, _ = train(separable(), target="harmful", families=["naive_bayes"], folds=3)
    save_model(tmp_path / "m", FunctionTransformer(os.getcwd), report)
    with pytest.raises(ConfigError, match="refusing to load types outside the allow-list: "
                                          "posix.getcwd"):
        load_model(tmp_path / "m")
    assert sio.get_untrusted_types(file=tmp_path / "m" / "model.skops") == ["posix.getcwd"]


def test_loading_a_directory_without_a_model_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not a saved model"):
        load_model(tmp_path)
