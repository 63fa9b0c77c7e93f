"""Issue 40 §1: pooled reliability is what everyone computes. Between judges, between reviewers,
in the report and across a judge's own runs, pooled α, Fleiss' κ and Gwet's AC1 count chance
agreement over the verdict values themselves (MET / UNMET, an option's label), as the
``krippendorff`` package and statsmodels do on the raters × units table (AC1: as Gwet's formula
written out, :mod:`tests.metrics.gwet_reference`), with missing ratings (N/A, or no verdict)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss
from tests.metrics.gwet_reference import reference_ac1

from assay.metrics.inter_judge import inter_judge
from assay.metrics.labels import CriterionInfo
from assay.metrics.summary import agreement_summary
from assay.rubric import Criterion
from assay.verdict import Verdict

JUDGES = ("a", "b", "c")
LIKERT = ("none", "some", "most", "all")


def _likert(criterion_id: str) -> Criterion:
    return Criterion(id=criterion_id, text=f"{criterion_id} text", kind="ordinal",
                     options=[{"label": x, "value": i / 3} for i, x in enumerate(LIKERT)])


def _random_verdicts(seed, kinds, n_items=30, judges=JUDGES, missing=0.2, met=0.8):
    """Random verdicts of ``judges`` on ``n_items`` items × one criterion per kind ("binary" or
    "ordinal"); a rating is missing (no verdict, or CANNOT_ASSESS) with probability ``missing``.
    Returns the verdicts, the criteria lookup and the raters × units table of values."""
    rng = np.random.default_rng(seed)
    verdicts, lookup, units = [], {}, []
    for i in range(n_items):
        for k, kind in enumerate(kinds):
            cid = f"{kind}{k}"
            lookup[(f"q{i}", cid)] = (CriterionInfo.binary(cid) if kind == "binary"
                                      else CriterionInfo.from_criterion(_likert(cid)))
            row = []
            for judge in judges:
                draw = rng.random()
                if draw < missing / 2:  # no verdict at all
                    row.append(None)
                    continue
                if draw < missing:
                    verdicts.append(Verdict(item_id=f"q{i}", criterion_id=cid, judge=judge,
                                            decision="CANNOT_ASSESS"))
                    row.append(None)
                    continue
                if kind == "binary":
                    value = "MET" if rng.random() < met else "UNMET"
                    verdicts.append(Verdict(item_id=f"q{i}", criterion_id=cid, judge=judge,
                                            decision=value))
                else:
                    value = LIKERT[int(rng.choice(4, p=[0.1, 0.2, 0.3, 0.4]))]
                    verdicts.append(Verdict(item_id=f"q{i}", criterion_id=cid, judge=judge,
                                            option=value))
                row.append(value)
            units.append(row)
    return verdicts, lookup, [list(col) for col in zip(*units, strict=True)]


def _package_alpha(by_rater, level, code):
    data = np.array([[np.nan if x is None else code[x] for x in row] for row in by_rater], float)
    return krippendorff.alpha(reliability_data=data, level_of_measurement=level)


def _statsmodels_fleiss(by_rater):
    complete = [unit for unit in zip(*by_rater, strict=True) if None not in unit]
    domain = sorted({x for unit in complete for x in unit})
    table, _ = aggregate_raters(np.array([[domain.index(x) for x in unit] for unit in complete]))
    return statsmodels_fleiss(table, method="fleiss")


def _ac1(by_rater, categories):
    return reference_ac1(list(zip(*by_rater, strict=True)), categories)


NOMINAL = {"MET": 0, "UNMET": 1, **{x: 2 + i for i, x in enumerate(LIKERT)}}


@pytest.mark.parametrize("seed", range(4))
def test_pooled_nominal_alpha_kappa_and_ac1_equal_the_packages_on_binary_criteria(seed):
    verdicts, lookup, by_rater = _random_verdicts(seed, ["binary"] * 4)
    r = inter_judge(verdicts, lookup, n_resamples=0)
    assert r.alpha_nominal.value == pytest.approx(_package_alpha(by_rater, "nominal", NOMINAL),
                                                  abs=1e-12)
    assert r.fleiss_kappa.value == pytest.approx(_statsmodels_fleiss(by_rater), abs=1e-12)
    assert r.ac1.value == pytest.approx(_ac1(by_rater, ["MET", "UNMET"]), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_pooled_ordinal_alpha_on_one_shared_scale_equals_the_package_on_option_steps(seed):
    verdicts, lookup, by_rater = _random_verdicts(seed, ["ordinal"] * 3)
    r = inter_judge(verdicts, lookup, n_resamples=0)
    steps = {x: i for i, x in enumerate(LIKERT)}
    assert r.alpha_ordinal is not None
    assert r.alpha_ordinal.value == pytest.approx(_package_alpha(by_rater, "ordinal", steps),
                                                  abs=1e-12)
    assert r.alpha_nominal.value == pytest.approx(_package_alpha(by_rater, "nominal", NOMINAL),
                                                  abs=1e-12)
    assert r.fleiss_kappa.value == pytest.approx(_statsmodels_fleiss(by_rater), abs=1e-12)
    assert r.ac1.value == pytest.approx(_ac1(by_rater, list(LIKERT)), abs=1e-12)


def test_mixed_binary_and_ordinal_criteria_pool_nominally_over_every_value():
    verdicts, lookup, by_rater = _random_verdicts(5, ["binary", "ordinal", "binary"])
    r = inter_judge(verdicts, lookup, n_resamples=0)
    assert r.alpha_ordinal is None
    assert r.alpha_nominal.value == pytest.approx(_package_alpha(by_rater, "nominal", NOMINAL),
                                                  abs=1e-12)
    assert r.ac1.value == pytest.approx(_ac1(by_rater, ["MET", "UNMET", *LIKERT]),
                                        abs=1e-12)


def test_score_interval_alpha_with_missing_scores_equals_the_package():
    rng = np.random.default_rng(8)
    scores = {j: {f"q{i}": float(rng.random()) for i in range(40) if rng.random() > 0.2}
              for j in JUDGES}
    verdicts = [Verdict(item_id="q0", criterion_id="x", judge=j, decision="MET") for j in JUDGES]
    r = inter_judge(verdicts, item_scores=scores, n_resamples=0)
    by_rater = [[scores[j].get(f"q{i}") for i in range(40)] for j in JUDGES]
    data = np.array([[np.nan if x is None else x for x in row] for row in by_rater], float)
    assert r.score_alpha_interval.value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), abs=1e-12)


def test_pooled_alpha_counts_met_on_a_penalty_criterion_as_the_same_value_as_on_a_positive_one():
    # judges a, b on a positive criterion c and a penalty criterion p (by hand): values MET ×5,
    # UNMET ×3 over n = 8, one unit of four disagrees: α = 1 − 7·2 / (64 − 25 − 9) = 8/15,
    # P̄ = 3/4, P_e = (5² + 3²) / 8² = 34/64: κ = (3/4 − 34/64) / (1 − 34/64) = 7/15
    answers = {("q1", "c"): "MM", ("q1", "p"): "MU", ("q2", "c"): "UU", ("q2", "p"): "MM"}
    verdicts = [Verdict(item_id=item, criterion_id=c, judge=judge,
                        decision="MET" if row[j] == "M" else "UNMET")
                for (item, c), row in answers.items() for j, judge in enumerate("ab")]
    r = inter_judge(verdicts, n_resamples=0)
    assert r.alpha_nominal.value == pytest.approx(8 / 15)
    assert r.fleiss_kappa.value == pytest.approx(7 / 15)


def test_reliability_between_reviewers_equals_the_package():
    labels, _, by_rater = _random_verdicts(9, ["binary"] * 3, judges=("dr1", "dr2", "dr3"))
    judge = [v.model_copy(update={"judge": "model"}) for v in labels if v.judge == "dr1"]
    summary = agreement_summary(judge, labels, n_resamples=0)
    assert summary.between_reviewers is not None
    assert summary.between_reviewers.alpha_nominal.value == pytest.approx(
        _package_alpha(by_rater, "nominal", NOMINAL), abs=1e-12)


async def test_the_reports_reliability_between_judges_is_the_packages_with_ac1(tmp_path):
    from tests.metrics.test_reliability_between_judges import _ensemble_run

    from assay.metrics.sources import run_verdicts
    from assay.report.data import load_run
    from assay.report.html import write_report

    run = await _ensemble_run(tmp_path)
    votes = run_verdicts(run)
    judges = sorted({v.judge for v in votes})
    units = sorted({(v.item_id, v.criterion_id) for v in votes})
    answer = {(v.judge, v.item_id, v.criterion_id): v.option or v.decision.value for v in votes
              if v.option or v.decision.value != "CANNOT_ASSESS"}
    by_rater = [[answer.get((j, *u)) for u in units] for j in judges]
    values = {x: i for i, x in enumerate(sorted(set(answer.values())))}
    reliability = load_run(run).agreement.inter_judge
    assert reliability.alpha_nominal.value == pytest.approx(
        _package_alpha(by_rater, "nominal", values), abs=1e-12)
    write_report([run], tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"Krippendorff α {reliability.alpha_nominal.value:.3f}" in html
    assert f"Gwet AC1 {reliability.ac1.value:.3f}" in html


@pytest.mark.parametrize("seed", range(3))
def test_the_reports_pooled_row_of_small_criteria_equals_the_packages(seed):
    """The report's judge table pools the criteria under its minimum of units into one row
    (:func:`assay.report.judge_agreement.judge_criteria`): that row's α, κ and AC1 are the
    packages' over those criteria's units alone, the big criterion's units left out."""
    from assay.report.compact import JudgeVotes
    from assay.report.judge_agreement import judge_criteria

    rng = np.random.default_rng(seed)
    votes, small_units = JudgeVotes(), []
    for i in range(40):
        # every item: the big criterion, and a small one of its own (1 unit each)
        criteria = [Criterion(id="big", text="Big."), Criterion(id=f"small{i}", text="Small.")]
        verdicts = []
        for criterion in criteria:
            row = ["MET" if rng.random() < 0.75 else "UNMET" for _ in JUDGES]
            verdicts += [Verdict(item_id=f"q{i}", criterion_id=criterion.id, judge=judge,
                                 decision=value) for judge, value in zip(JUDGES, row, strict=True)]
            if criterion.id != "big":
                small_units.append(row)
        votes.add(f"q{i}", criteria, verdicts)
    table = judge_criteria(votes.reliability(min_units=10, n_resamples=0), votes, min_units=10,
                           n_resamples=0)
    assert [r.criterion_id for r in table.rows] == ["big"] and table.pooled_criteria == 40
    by_rater = [list(col) for col in zip(*small_units, strict=True)]
    pooled = table.pooled
    assert pooled.n_units == 40
    assert pooled.alpha.value == pytest.approx(_package_alpha(by_rater, "nominal", NOMINAL),
                                               abs=1e-12)
    assert pooled.fleiss_kappa.value == pytest.approx(_statsmodels_fleiss(by_rater), abs=1e-12)
    assert pooled.ac1.value == pytest.approx(_ac1(by_rater, ["MET", "UNMET"]), abs=1e-12)
