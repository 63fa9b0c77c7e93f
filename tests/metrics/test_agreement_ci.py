"""Bootstrap CIs of agreement with human labels: seeded, over items, checked against an
independent per-resample loop and scikit-learn, and a stated reason where none is possible."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score
from typer.testing import CliRunner

from assay.cli import app
from assay.metrics.agreement import agreement
from assay.metrics.agreement_ci import accuracy_of, f1_of, item_resamples, kappa_of
from assay.metrics.labels import CriterionInfo
from assay.metrics.summary import agreement_summary
from assay.rubric import Criterion
from assay.verdict import Verdict

PAIN = Criterion(id="pain", text="How well is pain explained?", kind="ordinal",
                 options=[{"label": "poorly", "value": 0}, {"label": "partly", "value": 0.5},
                          {"label": "well", "value": 1}])
LEVELS = ["poorly", "partly", "well"]
N_ITEMS = 30


def V(item, criterion, answer, judge):
    key = "verdict" if answer in ("MET", "UNMET") else "option"
    return Verdict(item_id=item, criterion_id=criterion, judge=judge, **{key: answer})


def labelled():
    """30 items x (binary x, binary y, ordinal pain): a judge right most of the time."""
    human, judged = [], []
    for i in range(N_ITEMS):
        item = f"q{i:02d}"
        x_true, y_true = i % 3 != 0, i % 2 == 0
        x_pred = x_true if i % 7 else not x_true
        y_pred = y_true if i % 5 else not y_true
        pain_true, pain_pred = LEVELS[i % 3], LEVELS[(i + (i % 4 == 0)) % 3]
        for criterion, t, p in (("x", x_true, x_pred), ("y", y_true, y_pred)):
            human.append(V(item, criterion, "MET" if t else "UNMET", "dr"))
            judged.append(V(item, criterion, "MET" if p else "UNMET", "j"))
        human.append(V(item, "pain", pain_true, "dr"))
        judged.append(V(item, "pain", pain_pred, "j"))
    return judged, human


def lookup():
    infos = {"x": CriterionInfo.binary("x"), "y": CriterionInfo.binary("y"),
             "pain": CriterionInfo.from_criterion(PAIN)}
    return {(f"q{i:02d}", c): info for i in range(N_ITEMS) for c, info in infos.items()}


@pytest.fixture(scope="module")
def report():
    judged, human = labelled()
    [r] = agreement(judged, human, lookup(), seed=3, n_resamples=500)
    return r


def test_pooled_kappa_f1_and_accuracy_have_cis_around_their_values(report):
    pooled = report.pooled
    for metric in (pooled.accuracy, pooled.mean_kappa, pooled.binary.kappa, pooled.binary.f1,
                   pooled.binary.accuracy):
        assert metric.ci is not None, metric
        assert metric.ci.low <= metric.value <= metric.ci.high and metric.ci.level == 0.95


def test_per_criterion_cis_by_kind(report):
    by_id = {c.criterion_id: c for c in report.per_criterion}
    assert by_id["x"].binary.kappa.ci is not None and by_id["x"].binary.f1.ci is not None
    assert by_id["pain"].ordinal.kappa_quadratic.ci is not None
    assert by_id["pain"].ordinal.exact_accuracy.ci is not None


def test_the_pooled_accuracy_interval_equals_an_independent_per_resample_loop(report):
    judged, human = labelled()
    truth = {(v.item_id, v.criterion_id): v.decision or v.option for v in human}
    guess = {(v.item_id, v.criterion_id): v.decision or v.option for v in judged}
    items = sorted({item for item, _ in truth})
    rng = np.random.default_rng(3)
    draws = rng.integers(0, len(items), size=(500, len(items)))
    accuracies = []
    for draw in draws:
        agree = total = 0
        for index in draw:
            for criterion in ("x", "y", "pain"):
                key = (items[index], criterion)
                agree += truth[key] == guess[key]
                total += 1
        accuracies.append(agree / total)
    low, high = np.percentile(accuracies, [2.5, 97.5])
    assert report.pooled.accuracy.ci.low == pytest.approx(low, abs=1e-12)
    assert report.pooled.accuracy.ci.high == pytest.approx(high, abs=1e-12)


def test_the_resampled_statistics_are_scikit_learns_on_the_full_sample():
    rng = np.random.default_rng(0)
    true, pred = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    confusion = np.zeros((1, 3, 3))
    np.add.at(confusion[0], (true, pred), 1)
    steps = np.arange(3)
    quadratic = kappa_of((steps[:, None] - steps[None, :]) ** 2)(confusion)[0]
    assert quadratic == pytest.approx(cohen_kappa_score(true, pred, weights="quadratic"))
    assert kappa_of(1 - np.eye(3))(confusion)[0] == pytest.approx(cohen_kappa_score(true, pred))
    assert accuracy_of(confusion)[0] == pytest.approx(np.mean(true == pred))
    binary = np.zeros((1, 2, 2))
    np.add.at(binary[0], (true % 2, pred % 2), 1)
    assert f1_of(binary)[0] == pytest.approx(f1_score(true % 2, pred % 2))


def test_cis_are_seeded(report):
    judged, human = labelled()
    [same] = agreement(judged, human, lookup(), seed=3, n_resamples=500)
    [other] = agreement(judged, human, lookup(), seed=4, n_resamples=500)
    assert same.pooled.mean_kappa.ci == report.pooled.mean_kappa.ci
    assert other.pooled.mean_kappa.ci != report.pooled.mean_kappa.ci
    assert item_resamples(5, n_resamples=3, seed=1).tolist() == \
        item_resamples(5, n_resamples=3, seed=1).tolist()


@pytest.mark.parametrize("seed", range(5))
def test_resample_counts_are_each_resamples_draws_counted_one_by_one(seed):
    """The vectorised counts (one array of draws, offset in place) equal a per-resample
    ``np.bincount`` of the same generator's draws, on random sizes."""
    rng = np.random.default_rng(100 + seed)
    n_items, n_resamples = int(rng.integers(1, 40)), int(rng.integers(1, 60))
    draws = np.random.default_rng(seed).integers(0, n_items, size=(n_resamples, n_items))
    expected = np.stack([np.bincount(row, minlength=n_items) for row in draws])
    counts = item_resamples(n_items, n_resamples=n_resamples, seed=seed)
    assert counts.tolist() == expected.tolist()
    assert (counts.sum(axis=1) == n_items).all()


def test_score_level_correlations_have_cis():
    judged, human = labelled()
    summary = agreement_summary(judged, human, seed=1, n_resamples=300)
    scores = summary.reports[0].scores
    for metric in (scores.pearson, scores.spearman, scores.kendall, scores.mae):
        assert metric.ci is not None and metric.ci.low <= metric.value <= metric.ci.high


def test_with_a_single_item_the_ci_is_absent_and_says_why():
    human = [V("a", "x", "MET", "dr"), V("a", "y", "UNMET", "dr")]
    judged = [V("a", "x", "MET", "j"), V("a", "y", "UNMET", "j")]
    [r] = agreement(judged, human)
    assert r.pooled.accuracy.value == 1.0 and r.pooled.accuracy.ci is None
    assert r.pooled.accuracy.reason == "CI undefined: fewer than two items"


def test_a_figure_undefined_on_most_resamples_gets_no_ci_and_a_reason():
    # one MET among 20 items: most resamples hold no MET, so κ is undefined there
    human = [V(f"q{i}", "x", "MET" if i == 0 else "UNMET", "dr") for i in range(20)]
    judged = [V(f"q{i}", "x", "MET" if i in (0, 1) else "UNMET", "j") for i in range(20)]
    [r] = agreement(judged, human)
    kappa = r.pooled.binary.kappa
    assert kappa.value is not None and kappa.ci is None
    assert kappa.reason.startswith("CI undefined: the figure is undefined on ")


def test_cli_reports_cis_seeded_and_can_turn_them_off(tmp_path):
    judged, human = labelled()
    for name, rows in (("v.jsonl", judged), ("labels.jsonl", human)):
        (tmp_path / name).write_text("".join(v.model_dump_json() + "\n" for v in rows))
    args = ["agreement", str(tmp_path / "v.jsonl"), "--labels", str(tmp_path / "labels.jsonl")]
    out = CliRunner().invoke(app, [*args, "--seed", "5", "--json", str(tmp_path / "a.json")])
    assert out.exit_code == 0, out.output
    assert "95% bootstrap CIs over items (1000 resamples, seed 5)" in out.output
    pooled = json.loads((tmp_path / "a.json").read_text())["reports"][0]["pooled"]
    assert pooled["mean_kappa"]["ci"] is not None and pooled["binary"]["f1"]["ci"] is not None
    out = CliRunner().invoke(app, [*args, "--bootstrap", "0", "--json", str(tmp_path / "b.json")])
    pooled = json.loads((tmp_path / "b.json").read_text())["reports"][0]["pooled"]
    assert pooled["accuracy"]["ci"] is None
    assert pooled["accuracy"]["reason"] == "CI not computed (no bootstrap resamples asked for)"
